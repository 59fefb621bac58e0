package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// TestMain removes what the run made in Docker (dockertest.Main), also
// when a test failed.
func TestMain(m *testing.M) { os.Exit(dockertest.Main(m)) }

// TestLogsReadsTheLocalDockerEngine: two containers of a controller, as
// the manager names and labels them (plus the test's labels, which remove
// them at the end), one that exits writing to stderr and one that keeps
// running; logs prints both streams, one slot alone, and follows.
func TestLogsReadsTheLocalDockerEngine(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	id := "logs-" + strings.ToLower(labels[dockertest.TestLabel][:12])
	e := newTestEnv(t)
	e.create(newController(id, 2))
	ctx := t.Context()

	start := func(slot int, cmd ...string) {
		l := dockertest.WithLabels(t, map[string]string{api.LabelController: id, api.LabelSlot: fmt.Sprint(slot)})
		name := fmt.Sprintf("%s-%d", id, slot)
		created, err := cli.ContainerCreate(ctx, &container.Config{Image: image, Cmd: cmd, Labels: l}, nil, nil, nil, name)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
	}
	start(1, "/task", "--listen", "127.0.0.1:8081")
	start(2, "/task", "unexpected-arg") // exits at once, on stderr
	name1, name2 := id+"-1", id+"-2"

	run := func(args ...string) result {
		var stdout, stderr bytes.Buffer
		err := run(ctx, e.args(append([]string{"logs"}, args...)), strings.NewReader(""), &stdout, &stderr)
		return result{stdout.String(), stderr.String(), err}
	}
	var r result
	testpoll.Eventually(t, 20*time.Second, func() error {
		r = run(id)
		if r.err != nil {
			return r.err
		}
		if !strings.Contains(r.stdout, "["+name1+"] listening on 127.0.0.1:8081\n") || !strings.Contains(r.stderr, "["+name2+"] task: unexpected arguments") {
			return fmt.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
		}
		return nil
	})
	if strings.Contains(r.stdout, "unexpected") || strings.Contains(r.stderr, "listening") {
		t.Errorf("stdout and stderr mixed: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	r = run(id+"/2", "--tail", "1")
	assertOK(t, r)
	if r.stdout != "" || !strings.HasPrefix(r.stderr, "task: unexpected arguments") {
		t.Errorf("logs %s/2: stdout %q, stderr %q, want the error alone, unprefixed", id, r.stdout, r.stderr)
	}

	// -f goes on until interrupted
	fctx, cancel := context.WithCancel(ctx)
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run2(fctx, e.args([]string{"logs", id + "/1", "-f"}), &out) }()
	testpoll.Until(t, 20*time.Second, "the followed output", func() bool { return strings.Contains(out.String(), "listening on") })
	select {
	case err := <-done:
		t.Fatalf("logs -f returned while the container runs: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("interrupted logs -f returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not return after the interrupt")
	}
}

// run2 is run with stdout to out and stderr dropped.
func run2(ctx context.Context, args []string, out *syncbuf.Buffer) error {
	var stderr bytes.Buffer
	return run(ctx, args, strings.NewReader(""), out, &stderr)
}
