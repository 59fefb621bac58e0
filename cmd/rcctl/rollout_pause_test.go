package main

import "testing"

func TestRolloutPauseAndResumeSetPausedAndKeepTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	assertStdout(t, e.runCLI("rollout", "pause", "web"), "web paused\n")
	got := e.get("web")
	want := newController("web", 3)
	want.DesiredState.Paused = true
	if encode(t, got.Controller) != encode(t, want) {
		t.Errorf("stored spec after pause:\n%s\nwant:\n%s", encode(t, got.Controller), encode(t, want))
	}

	assertStdout(t, e.runCLI("rollout", "pause", "web"), "web is already paused; nothing changed\n")
	if again := e.get("web"); again.ModRevision != got.ModRevision {
		t.Errorf("a second pause wrote the spec: revision %d, was %d", again.ModRevision, got.ModRevision)
	}

	assertStdout(t, e.runCLI("rollout", "resume", "web"), "web resumed\n")
	if encode(t, e.get("web").Controller) != encode(t, newController("web", 3)) {
		t.Errorf("stored spec after resume: %s", encode(t, e.get("web").Controller))
	}
	resumed := e.get("web").ModRevision
	assertStdout(t, e.runCLI("rollout", "resume", "web"), "web is not paused; nothing changed\n")
	if again := e.get("web"); again.ModRevision != resumed {
		t.Errorf("a second resume wrote the spec: revision %d, was %d", again.ModRevision, resumed)
	}
}

func TestRolloutPauseOfAnUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	assertFails(t, e.runCLI("rollout", "pause", "nope"), `controller "nope" not found`)
}
