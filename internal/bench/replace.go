package bench

// This file is the replacement part: docker rm -f of one replica until its
// replacement runs, next to one plain create+start of the same image, the
// least any replacement can take. The end-to-end part uses the same plain
// create+start.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/api"
)

// replaceReplicas is the size of the controller whose replicas are removed.
const replaceReplicas = 3

// measureDockerStart times plain create+start, one at a time, until the
// start event arrives.
func (e *dockerEnv) measureDockerStart(ctx context.Context, tries int, res *DockerResults) error {
	for i := range tries {
		d, err := e.plainStart(ctx, fmt.Sprintf("rmbench-%s-plain-%d", e.runID, i+1))
		if err != nil {
			return err
		}
		res.DockerStart = append(res.DockerStart, d)
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.progress, "plain docker create+start: %s\n", spread(res.DockerStart))
	return nil
}

// plainStart times one create+start of the image, as `docker run -d`,
// until its start event, then removes the container.
func (e *dockerEnv) plainStart(ctx context.Context, name string) (time.Duration, error) {
	var id string
	d, err := e.timeChange(ctx, func() (err error) {
		id, err = runContainer(ctx, e.cli, e.image, name, e.runLabels("plain"))
		return err
	}, "start", 1, func(ev dockerEvent) bool { return ev.ID == id })
	if err != nil {
		return 0, fmt.Errorf("plain docker start: %w", err)
	}
	return d, removeContainer(ctx, e.cli, id)
}

// measureReplacement removes one replica of a running controller at a
// time and times until a new container of the controller starts.
func (e *dockerEnv) measureReplacement(ctx context.Context, tries int, res *DockerResults) error {
	id := "rmbench-" + e.runID + "-repl"
	match := labelled(api.LabelController, id)
	_, err := e.timeChange(ctx, func() error {
		_, err := e.daemon.store.CreateController(ctx, newController(id, e.image, replaceReplicas, e.runLabels("manager")))
		return err
	}, "start", replaceReplicas, match)
	if err != nil {
		return fmt.Errorf("replacement: start %d replicas: %w", replaceReplicas, err)
	}
	for i := range tries {
		running, err := e.waitRunning(ctx, id, replaceReplicas)
		if err != nil {
			return fmt.Errorf("replacement: %w", err)
		}
		victim := running[i%len(running)].ID
		d, err := e.timeChange(ctx, func() error { return removeContainer(ctx, e.cli, victim) },
			"start", 1, func(ev dockerEvent) bool { return match(ev) && ev.ID != victim })
		if err != nil {
			return fmt.Errorf("replacement %d: %w", i+1, err)
		}
		res.Replacement = append(res.Replacement, d)
		if err := sleepCtx(ctx, 300*time.Millisecond); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.progress, "replacement after rm -f: %s\n", spread(res.Replacement))
	_, err = e.timeChange(ctx, func() error { return e.daemon.store.DeleteController(ctx, id) }, "destroy", replaceReplicas, match)
	if err != nil {
		return fmt.Errorf("replacement: delete the controller: %w", err)
	}
	return e.settle(ctx, map[string]string{api.LabelController: id})
}

// waitRunning waits until the controller has exactly n containers, all
// running, and returns them sorted by name.
func (e *dockerEnv) waitRunning(ctx context.Context, id string, n int) ([]container.Summary, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := listContainers(ctx, e.cli, map[string]string{api.LabelController: id})
		if err != nil {
			return nil, err
		}
		running := 0
		for _, c := range list {
			if c.State == "running" {
				running++
			}
		}
		if running == n && len(list) == n {
			sortByName(list)
			return list, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %d containers, %d running, want %d running", id, len(list), running, n)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func sortByName(list []container.Summary) {
	name := func(c container.Summary) string {
		if len(c.Names) == 0 {
			return ""
		}
		return c.Names[0]
	}
	slices.SortFunc(list, func(a, b container.Summary) int { return strings.Compare(name(a), name(b)) })
}
