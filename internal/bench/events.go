package bench

// This file records the Docker events of a run's containers, with the
// time each was received, so that "converged" means what the engine says:
// the N-th container's start event, not a poll that may lag by its
// interval. One stream serves the whole run; a part marks where it starts
// and waits for the events after its mark.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// dockerEvent is one container event as received.
type dockerEvent struct {
	At     time.Time
	Action string
	ID     string
	// Labels are the event's attributes: the container's labels, plus its
	// name and image.
	Labels map[string]string
}

// recorder keeps every event of the stream.
type recorder struct {
	mu     sync.Mutex
	events []dockerEvent
	// changed is closed, and replaced, whenever an event arrives or the
	// stream fails.
	changed chan struct{}
	err     error
}

// startRecorder subscribes to the container events that carry the run's
// label and returns once the subscription is known to be in place: the
// create event of a probe container has come through.
func startRecorder(ctx context.Context, cli *client.Client, runID, image string) (*recorder, error) {
	r := &recorder{changed: make(chan struct{})}
	msgs, errs := cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", runLabel+"="+runID),
	)})
	go r.follow(msgs, errs)

	mark := r.mark()
	probe, err := cli.ContainerCreate(ctx, &container.Config{Image: image, Labels: map[string]string{runLabel: runID, systemLabel: "probe"}},
		nil, nil, nil, "rmbench-"+runID+"-probe")
	if err != nil {
		return nil, fmt.Errorf("docker events: probe container: %w", err)
	}
	defer func() {
		_ = cli.ContainerRemove(context.WithoutCancel(ctx), probe.ID, container.RemoveOptions{Force: true})
	}()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := r.waitEvents(waitCtx, mark, "create", 1, func(e dockerEvent) bool { return e.ID == probe.ID }); err != nil {
		return nil, fmt.Errorf("docker events: the probe's create never came through: %w", err)
	}
	return r, nil
}

func (r *recorder) follow(msgs <-chan events.Message, errs <-chan error) {
	for {
		select {
		case m := <-msgs:
			ev := dockerEvent{At: time.Now(), Action: string(m.Action), ID: m.Actor.ID, Labels: m.Actor.Attributes}
			r.update(func() { r.events = append(r.events, ev) })
		case err := <-errs:
			r.update(func() { r.err = fmt.Errorf("docker events: %w", err) })
			return
		}
	}
}

// update changes the record under its lock and wakes the waiters.
func (r *recorder) update(change func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change()
	close(r.changed)
	r.changed = make(chan struct{})
}

// mark is the position a part waits from: only events after it count.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// waitEvents waits until n distinct containers accepted by match have had
// action since mark, for at most changeTimeout, and returns the first such
// event of each, in the order received.
func (r *recorder) waitEvents(ctx context.Context, mark int, action string, n int, match func(dockerEvent) bool) ([]dockerEvent, error) {
	timer := time.NewTimer(changeTimeout)
	defer timer.Stop()
	seen := make(map[string]bool, n)
	out := make([]dockerEvent, 0, n)
	for next := mark; ; {
		r.mu.Lock()
		for ; next < len(r.events) && len(out) < n; next++ {
			if e := r.events[next]; e.Action == action && !seen[e.ID] && match(e) {
				seen[e.ID] = true
				out = append(out, e)
			}
		}
		changed, err := r.changed, r.err
		r.mu.Unlock()
		switch {
		case len(out) == n:
			return out, nil
		case err != nil:
			return nil, err
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, fmt.Errorf("%d of %d %s events within %s", len(out), n, action, changeTimeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// labelled matches the events of containers that carry key=value.
func labelled(key, value string) func(dockerEvent) bool {
	return func(e dockerEvent) bool { return e.Labels[key] == value }
}
