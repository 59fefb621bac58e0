package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// fakeLogs is a logSource of containers with fixed output.
type fakeLogs struct {
	tasks  []api.Task
	output map[string]string // container id → stdout
	asked  []logOptions
}

func (f *fakeLogs) ListTasks(_ context.Context, selector map[string]string) ([]api.Task, error) {
	var out []api.Task
	for _, t := range f.tasks {
		ok := true
		for k, v := range selector {
			ok = ok && t.Labels[k] == v
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *fakeLogs) Logs(_ context.Context, id string, opts logOptions, stdout, stderr io.Writer) error {
	f.asked = append(f.asked, opts)
	fmt.Fprint(stdout, f.output[id])
	fmt.Fprint(stderr, "err of "+id) // no final newline
	return nil
}

func localTask(id string, slot int) api.Task {
	return api.Task{ID: fmt.Sprintf("%s-%d-id", id, slot), Name: fmt.Sprintf("%s-%d", id, slot), State: api.StateRunning,
		Labels: map[string]string{api.LabelController: id, api.LabelSlot: strconv.Itoa(slot)}}
}

func (e *testEnv) runLogs(src logSource, args ...string) result {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	c := e.cli(&stdout, &stderr)
	c.dialLogs = func(string) (logSource, func(), error) { return src, nil, nil }
	err := c.run(context.Background(), e.args(append([]string{"logs"}, args...)))
	return result{stdout.String(), stderr.String(), err}
}

func TestLogsPrintsTheLocalContainersAndSaysWhereTheOthersRun(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	lease := e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "b", Manager: "host-b/77"}, lease)
	e.report(lease, "a", "web", reported("web", 1, e.now), reported("web", 3, e.now))
	e.report(lease, "b", "web", reported("web", 2, e.now))
	other := localTask("web", 2)
	other.Labels[api.LabelRegistry] = "another-registry" // not ours: left alone
	if _, err := e.client.Put(t.Context(), e.store.RegistryIDKey(), "this-registry"); err != nil {
		t.Fatal(err)
	}
	src := &fakeLogs{
		tasks:  []api.Task{localTask("web", 3), localTask("web", 1), other, localTask("api", 1)},
		output: map[string]string{"web-1-id": "one\ntwo\n", "web-3-id": "three\n", "web-2-id": "not ours\n"},
	}

	r := e.runLogs(src, "web", "--tail", "5")

	assertStdout(t, r, "[web-1] one\n[web-1] two\n[web-3] three\n")
	if want := "web-2 runs on node b (manager host-b/77); on that node run: docker logs --tail 5 web-2\n" +
		"[web-1] err of web-1-id\n[web-3] err of web-3-id\n"; r.stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
	if len(src.asked) != 2 || src.asked[0] != (logOptions{tail: 5}) {
		t.Errorf("Docker asked with %+v, want tail 5 twice", src.asked)
	}

	// one slot: its output as it is, no prefix
	r = e.runLogs(src, "web/3", "-f")
	assertStdout(t, r, "three\n")
	if src.asked[len(src.asked)-1] != (logOptions{follow: true, tail: -1}) {
		t.Errorf("Docker asked with %+v, want follow", src.asked[len(src.asked)-1])
	}

	// a slot on another node: where, and what to run there, and a failure
	r = e.runLogs(src, "web/2", "-f")
	assertFails(t, r, "web-2 does not run on this Docker engine; see its node above")
	if want := "web-2 runs on node b (manager host-b/77); on that node run: docker logs -f web-2\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

func TestLogsMistakes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	src := &fakeLogs{}

	assertFails(t, e.runLogs(src, "nope"), `controller "nope" not found`)
	assertFails(t, e.runLogs(src, "web/2"), "web-2 is not on this Docker engine, and no node reports it")
	assertFails(t, e.runLogs(src, "web"), `no container of controller "web" is on this Docker engine, and no node reports one`)
	for _, args := range [][]string{{"web/x"}, {"web/0"}, {"/1"}, {}, {"web", "api"}, {"web", "--tail", "-2"}} {
		r := e.runLogs(src, args...)
		if r.err == nil || exitCode(r.err) != 2 || !strings.HasPrefix(r.err.Error(), "logs: ") {
			t.Errorf("%q: error %v, want a usage error of logs", args, r.err)
		}
	}
}

func TestLogsTakesTheNameDockerShows(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	e.create(newController("web-probed", 1))
	lease := e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "b", Manager: "host-b/77"}, lease)
	e.report(lease, "b", "web", reported("web", 2, e.now))
	prober := localTask("web-probed", 1)
	prober.ID, prober.Name = "prober-id", "web-probed-1.prober"
	src := &fakeLogs{
		tasks:  []api.Task{localTask("web", 1), localTask("web-probed", 1), prober},
		output: map[string]string{"web-1-id": "one\n", "web-probed-1-id": "probed\n", "prober-id": "probing\n"},
	}

	// a slot's first container, alone, as docker logs prints it
	assertStdout(t, e.runLogs(src, "web-1"), "one\n")
	assertStdout(t, e.runLogs(src, "web-probed-1"), "probed\n")
	// another container of the task, by its name
	assertStdout(t, e.runLogs(src, "web-probed-1.prober"), "probing\n")
	// the slot prints both
	assertStdout(t, e.runLogs(src, "web-probed/1"), "[web-probed-1] probed\n[web-probed-1.prober] probing\n")
	// a container on another node: where it runs
	r := e.runLogs(src, "web-2")
	assertFails(t, r, "web-2 does not run on this Docker engine; see its node above")
	assertContains(t, r.stderr, "web-2 runs on node b (manager host-b/77); on that node run: docker logs web-2\n")
	// a name of no controller's container
	assertFails(t, e.runLogs(src, "nope-1"), `controller "nope-1" not found, nor a container of that name`)
	assertFails(t, e.runLogs(src, "web-1.nope"), "web-1.nope is not on this Docker engine, and no node reports it")
}
