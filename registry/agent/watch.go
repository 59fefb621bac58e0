package agent

// This file keeps the node's spec cache in step with etcd, through the
// store's mirror of the controllers prefix. It does not sync anything
// itself: it only queues the controllers that changed.

import (
	"context"
	"fmt"

	"github.com/replication-manager/replication-manager/registry"
)

// watchSpecs lists the specs, then follows the watch, until ctx ends
// (it then returns nil), through the store's one list-then-watch loop
// (registry/mirror.go). While etcd is away it keeps trying, with a capped
// exponential backoff; it returns an error only when etcd refuses this
// manager for good (permission denied, authentication failed).
func (rm *Agent) watchSpecs(ctx context.Context) error {
	err := rm.store.Mirror(ctx, rm.store.ControllersPrefix(), &specMirror{rm: rm, ignored: map[string]bool{}}, rm.logger.Warn)
	if err != nil {
		return fmt.Errorf("watch controllers: %w", err)
	}
	return nil
}

// specMirror is the spec cache as the mirror fills it: each list replaces
// it and queues what changed, each event queues its controller.
type specMirror struct {
	rm *Agent
	// ignored are the keys below the prefix that are not controllers',
	// warned about once.
	ignored map[string]bool
}

func (m *specMirror) Reset(keys []registry.KV, rev int64) {
	rm := m.rm
	specs := make([]registry.Spec, 0, len(keys))
	for _, k := range keys {
		if !rm.store.IsControllerKey(k.Key) {
			m.warnIgnored(k.Key)
			continue
		}
		specs = append(specs, rm.store.MirroredSpec(k))
	}
	changed := rm.specs.replace(specs, rev)
	rm.later(changed...) // at start every controller, after a compaction those that changed
	rm.logger.Info("controllers listed", "count", len(specs), "revision", rev, "changed", len(changed))
}

func (m *specMirror) Put(k registry.KV) {
	if ev := m.rm.store.DecodeEvent(k, false); ev.Ignored {
		m.warnIgnored(ev.Key)
	} else {
		m.rm.applyEvent(ev)
	}
}

func (m *specMirror) Del(key string, rev int64) {
	if ev := m.rm.store.DecodeEvent(registry.KV{Key: key, ModRev: rev}, true); !ev.Ignored {
		m.rm.applyEvent(ev)
	}
}

// The mirror tells a specMirror of its restarts, which it counts.
var _ registry.RestartTarget = (*specMirror)(nil)

// restarted counts a restart of the watch, by why it stopped.
func (m *specMirror) Restarted(err error) {
	m.rm.metrics.watchRestarts.WithLabelValues(registry.WatchRestartReason(err)).Inc()
}

// warnIgnored logs, once per key, that a key below the controllers prefix
// is not a controller.
func (m *specMirror) warnIgnored(key string) {
	if m.ignored[key] {
		return
	}
	m.ignored[key] = true
	m.rm.logger.Warn("key below the controllers prefix is not a controller (its id would hold a slash); ignored", "key", key)
}

// applyEvent records one watch event and queues its controller if the event
// is newer than what the cache holds.
func (rm *Agent) applyEvent(ev registry.ControllerEvent) {
	old, existed, _ := rm.specs.get(ev.Spec.ID)
	var changed bool
	if ev.Deleted {
		changed = rm.specs.remove(ev.Spec.ID, ev.Spec.ModRevision)
	} else {
		changed = rm.specs.put(ev.Spec)
	}
	if !changed {
		rm.logger.Debug("stale controller event ignored", "controller", ev.Spec.ID, "revision", ev.Spec.ModRevision)
		return
	}
	if !ev.Deleted && existed && sameReplicas(old, ev.Spec) {
		rm.later(ev.Spec.ID) // a template or strategy change: a rollout, which can wait a moment
		return
	}
	rm.queue.Add(ev.Spec.ID) // a new controller, a scale, a delete
}

// sameReplicas reports whether two revisions of a spec ask for the same
// number of replicas.
func sameReplicas(a, b registry.Spec) bool {
	return a.Controller != nil && b.Controller != nil &&
		a.Controller.DesiredState.Replicas == b.Controller.DesiredState.Replicas
}
