package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/roles"
)

func TestAGraceOverTheNodesCapIsAnEventOncePerTemplate(t *testing.T) {
	h := newHarness(t, roles.Options{MaxStopGrace: 6 * time.Second})
	rc := newController("web", 2)
	grace := 30
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].StopGracePeriodSeconds = &grace
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}

	var capped []api.Event
	testpoll.Until(t, waitTimeout, "the events written", func() bool { // written off the sync's path
		events, err := h.store.ListEvents(t.Context(), "web")
		if err != nil {
			t.Fatal(err)
		}
		capped = capped[:0]
		created := false
		for _, ev := range events {
			switch ev.Reason {
			case agent.ReasonStopGraceCapped:
				capped = append(capped, ev)
			case "Created":
				created = true
			}
		}
		return created && len(capped) > 0
	})
	if len(capped) != 1 {
		t.Fatalf("%d StopGraceCapped events for two containers of one template, want 1: %+v", len(capped), capped)
	}
	if ev := capped[0]; ev.Type != api.EventWarning || !strings.Contains(ev.Message, "6s") || !strings.Contains(ev.Message, "30s") {
		t.Errorf("event %+v: want a warning naming the cap and the grace asked for", ev)
	}
}

func TestAFailedPreStopStillRemovesTheContainer(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.fake.PreStopExec = func(context.Context, string, []string) error { return errors.New("exit 1") }
	rc := newController("web", 2)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].PreStop = &api.PreStop{Exec: []string{"/drain"}}
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	rc.DesiredState.Replicas = 1
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("scale-down: %v, want no error: the preStop's failure is a warning", err)
	}
	if n := h.fake.Len(); n != 1 {
		t.Errorf("%d containers after the scale-down to 1", n)
	}
	if stops := h.fake.Stops(); len(stops) != 1 || stops[0].PreStop != `exec ["/drain"]` {
		t.Errorf("stops %+v, want the one of web-2 with its preStop", stops)
	}
}
