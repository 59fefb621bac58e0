package leader

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/replication-manager/replication-manager/registry"
)

// The loop looks at seen when it has nothing left to do; a mirror raises
// seen only after the change is in the mailbox, so the loop may have
// looked in between. Each change handed over is told after seen rose, or
// a CaughtUp call would wait for a wake that never comes.
func TestAMirrorTellsItHandedAChangeOnlyOnceSeenRose(t *testing.T) {
	var seen atomic.Int64
	var told []int64
	m := mirrorFuncs{
		onReset: func([]registry.KV, int64) {}, onPut: func(registry.KV) {}, onDel: func(string, int64) {},
		seen: &seen, handed: func() { told = append(told, seen.Load()) },
	}
	m.Reset(nil, 10)
	m.Put(registry.KV{Key: "k", ModRev: 11})
	m.Del("k", 12)
	m.Put(registry.KV{Key: "k", ModRev: 12}) // nothing new: nothing to tell
	if want := []int64{10, 11, 12}; !slices.Equal(told, want) {
		t.Fatalf("handed was told at seen %v, want %v", told, want)
	}
}
