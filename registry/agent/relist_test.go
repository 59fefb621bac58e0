package agent

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/replication-manager/replication-manager/api"
)

// Issue 30: the periodic pass syncs every controller from the cache and
// lists the containers again only once --relist-period has passed; a list
// that finds the cache wrong (an event Docker dropped) is counted.
func TestThePeriodicPassListsTheContainersOnlyEveryRelistPeriod(t *testing.T) {
	h := newHarness(t, Options{RelistPeriod: time.Minute})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil { // lists once
		t.Fatal(err)
	}
	lists := h.fake.Counts().List

	h.clock.Advance(30 * time.Second)
	if err := h.rm.Resync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Counts().List; got != lists {
		t.Errorf("%d container lists after a periodic pass within the relist period, want %d: it syncs from the cache", got, lists)
	}

	// Docker's event of a stop is lost: the cache still has it running
	web1 := h.fake.Tasks()[0].ID
	h.fake.SetState(web1, api.StateExited, 0)
	h.clock.Advance(30 * time.Second)
	if err := h.rm.Resync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Counts().List; got != lists+1 {
		t.Errorf("%d container lists once the relist period passed, want %d", got, lists+1)
	}
	if got := testutil.ToFloat64(h.rm.metrics.cacheDrift); got != 1 {
		t.Errorf("cache drift counted %v, want 1: the list found web's container stopped", got)
	}
}
