package main

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

func TestRolloutRestartStampsTheTemplateAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	oldHash := api.TemplateHash(&newController("web", 3).DesiredState.TaskTemplate)

	r := e.runCLI("rollout", "restart", "web")

	assertStdout(t, r, "web restarted\n")
	got := e.get("web").Controller
	want := newController("web", 3)
	want.DesiredState.TaskTemplate.RestartedAt = "2026-11-29T10:00:00Z"
	if encode(t, got) != encode(t, want) {
		t.Errorf("stored spec:\n%s\nwant:\n%s", encode(t, got), encode(t, want))
	}
	if api.TemplateHash(&got.DesiredState.TaskTemplate) == oldHash {
		t.Errorf("the template hash did not change: no container would be outdated")
	}
}

func TestRolloutRestartTwiceInOneSecondStillChangesTheTemplate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 10, 0, 0, 250_000_000, time.UTC)
	first := restartTime(now, "")
	second := restartTime(now.Add(100*time.Millisecond), first)

	if first != "2026-11-29T10:00:00Z" || second != "2026-11-29T10:00:00.35Z" {
		t.Errorf("restart times %q then %q, want 2026-11-29T10:00:00Z then 2026-11-29T10:00:00.35Z", first, second)
	}
	if _, err := time.Parse(time.RFC3339, second); err != nil {
		t.Errorf("%q is not RFC 3339: %v", second, err)
	}
}

func TestRolloutRestartOfNoReplicasChangesNothingAndSaysSo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 0))
	before := e.revision()

	r := e.runCLI("rollout", "restart", "web")

	assertStdout(t, r, "web has no replicas to restart; nothing changed\n")
	assertNothingWritten(t, e, before)
}

func TestRolloutRestartOfAPausedControllerWarns(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := newController("web", 3)
	rc.DesiredState.Paused = true
	e.create(rc)

	r := e.runCLI("rollout", "restart", "web")

	assertStdout(t, r, "web restarted\n")
	assertContains(t, r.stderr, "warning: web is paused")
}

func TestRolloutRestartOfAnUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.runCLI("rollout", "restart", "nope")

	assertFails(t, r, `controller "nope" not found`)
}

func TestRolloutWithoutACommandOrIDIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rollout"}, "rollout: name a command: status, history, undo, restart, pause or resume"},
		{[]string{"rollout", "frobnicate"}, `rollout: unknown command "frobnicate"`},
		{[]string{"rollout", "status"}, "rollout status: want exactly one ID, got 0"},
		{[]string{"rollout", "undo", "a", "b"}, "rollout undo: want exactly one ID, got 2"},
		{[]string{"rollout", "undo", "web", "--to-revision", "-1"}, "--to-revision must not be negative"},
		{[]string{"rollout", "status", "web", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"rollout", "restart", "web", "--bogus"}, "rollout restart: unknown flag: --bogus"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			r := runOffline(t, tt.args...)
			assertFails(t, r, tt.want)
			if got := exitCode(r.err); got != 2 {
				t.Errorf("exit code %d, want 2", got)
			}
		})
	}
}
