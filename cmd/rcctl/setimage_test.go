package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

// twoContainers is web with a second container, prober.
func twoContainers() *api.ReplicationController {
	rc := newController("web", 2)
	m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
	m.Containers = append(m.Containers, api.Container{Name: "prober", Image: "demo-task:latest", Command: api.Command{"/task", "--probe", "127.0.0.1:8080"}})
	return rc
}

func TestSetImageWritesTheImageAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := twoContainers()
	e.create(rc)
	before := e.get("web").ModRevision

	r := e.runCLI("set", "image", "web", "prober=demo-task:v2")

	assertStdout(t, r, "controller \"web\" image updated (prober: demo-task:latest → demo-task:v2)\n")
	after := e.get("web")
	want := twoContainers()
	want.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[1].Image = "demo-task:v2"
	if got := encode(t, after.Controller); got != encode(t, want) {
		t.Errorf("stored spec:\n%s\nwant only prober's image changed:\n%s", got, encode(t, want))
	}
	if after.ModRevision == before {
		t.Errorf("ModRevision %d did not move", after.ModRevision)
	}

	// * is every container; a name given beside it wins
	r = e.runCLI("set", "image", "web", "*=demo-task:v3", "web=demo-task:v4")
	assertStdout(t, r, "controller \"web\" image updated (web: demo-task:latest → demo-task:v4, prober: demo-task:v2 → demo-task:v3)\n")
}

func TestSetImageAsSetWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 2))
	before := e.revision()

	r := e.runCLI("set", "image", "web", "web=demo-task:latest")

	assertStdout(t, r, "controller \"web\" unchanged: its images are as given; nothing written\n")
	assertNothingWritten(t, e, before)
}

func TestSetImageDryRunShowsEachReplacementAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	old := newController("web", 2)
	e.create(old)
	runsOn(t, e, leases, old, "a", "b")
	before := e.revision()
	newHash := api.TemplateHash(&withImage(newController("web", 2), "demo-task:v2").DesiredState.TaskTemplate)

	r := e.runDryRun("set", "image", "web", "web=demo-task:v2", "--dry-run")

	detail := " (template " + api.TemplateHash(&old.DesiredState.TaskTemplate) + " → " + newHash + ", stopped first)\n"
	assertStdout(t, r, ""+
		"controller \"web\" image updated (web: demo-task:latest → demo-task:v2) (dry run)\n"+
		"web-2: would be replaced on b"+detail+
		"web-1: would be replaced on a"+detail+
		"image demo-task:v2 on a: would be pulled if the node lacks it\n"+
		"image demo-task:v2 on b: would be pulled if the node lacks it\n"+
		"dry run: 2 to replace (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestSetImageMistakes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(twoContainers())
	before := e.revision()

	assertFails(t, e.runCLI("set", "image", "web", "sidecar=demo-task:v2"),
		`controller "web" has no container "sidecar" (its containers: "web", "prober"); nothing written`)
	assertFails(t, e.runCLI("set", "image", "nope", "web=demo-task:v2"), `controller "nope" not found`)
	assertFails(t, e.runCLI("set", "image", "web", "web=Bad Image"), `controller "web" is invalid with the new image (nothing written)`, "image")
	assertNothingWritten(t, e, before)
	for _, args := range [][]string{
		{"set", "image", "web"},
		{"set", "image", "web", "demo-task:v2"},
		{"set", "image", "web", "=demo-task:v2"},
		{"set", "image", "web", "web="},
		{"set", "image", "web", "web=a", "web=b"},
		{"set", "image", "web", "web=a", "--dry-run", "--wait"},
		{"set"},
		{"set", "images"},
	} {
		r := e.runCLI(args...)
		if r.err == nil || exitCode(r.err) != 2 || !strings.HasPrefix(r.err.Error(), "set") {
			t.Errorf("%q: error %v, want a usage error of set", args, r.err)
		}
	}
}

func TestCompletionOfSetImageOffersIDsThenContainers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(twoContainers())
	e.create(newController("worker", 1))
	etcd := []string{"--etcd-servers", e.etcd.ClientURL}

	if words, _ := complete(t, append(etcd, "set", "image", "w")...); !slices.Equal(words, []string{"web", "worker"}) {
		t.Errorf("IDs offered %q, want web, worker", words)
	}
	words, directive := complete(t, append(etcd, "set", "image", "web", "")...)
	if want := []string{"web=", "prober="}; !slices.Equal(words, want) || directive != ":6" {
		t.Errorf("containers offered %q, %q; want %q, :6 (no space, no files)", words, directive, want)
	}
	if words, _ := complete(t, append(etcd, "set", "image", "web", "web=demo-task:v2", "")...); !slices.Equal(words, []string{"prober="}) {
		t.Errorf("after web=: %q, want prober= only", words)
	}
}
