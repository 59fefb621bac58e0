package main

// wait follows a controller until the manager reports something: --wait
// of apply, scale and run until the newest spec is observed with every
// replica ready, rollout status until the rollout completes. Both print
// why the replicas are not ready as soon as the status says it (slots that
// fit no node, a failed create, a crash loop), and stop at once, failing,
// when the manager reports the controller blocked: it cannot progress
// without a change, and waiting longer would only hide why. Both are built on
// follow, which reads the spec and the status in one etcd request and then
// watches both keys from the revision after it (the list-then-watch of
// etcd's mirror), so that no change is missed and nothing is polled.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// defaultWaitTimeout bounds --wait when --timeout is not given.
const defaultWaitTimeout = 2 * time.Minute

// waitFlags are the flags apply and scale share.
type waitFlags struct {
	wait    *bool
	timeout *time.Duration
}

func addWaitFlags(fs interface {
	Bool(string, bool, string) *bool
	Duration(string, time.Duration, string) *time.Duration
}) waitFlags {
	return waitFlags{
		wait:    fs.Bool("wait", false, "wait until every replica is ready, showing progress"),
		timeout: fs.Duration("timeout", defaultWaitTimeout, "how long --wait waits"),
	}
}

// waitAfterWrite waits for id at the revision its spec has now, when --wait
// was given.
func (c *cli) waitAfterWrite(ctx context.Context, cn *conn, id string, w waitFlags) error {
	if !*w.wait {
		return nil
	}
	spec, err := cn.getController(ctx, id)
	if err != nil {
		return err
	}
	return c.waitForController(ctx, cn, id, spec.ModRevision, *w.timeout)
}

// waitForController waits until the status of id reflects at least spec
// revision rev with every replica ready, printing "N of M ready" as it
// changes.
func (c *cli) waitForController(ctx context.Context, cn *conn, id string, rev int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	warn := troubleWarner(c)
	err := follow(ctx, cn, id, func(s snapshot) (bool, error) {
		if s.deleted {
			return false, fmt.Errorf("controller %q was deleted while waiting", id)
		}
		st := s.status
		if st == nil || s.spec.Controller == nil {
			return false, nil
		}
		desired := s.spec.Controller.DesiredState.Replicas
		if line := progressLine(id, st, desired, rev); line != last {
			fmt.Fprintln(c.stdout, line)
			last = line
		}
		if cond := invalidSpec(st); cond != nil && st.ObservedRevision >= rev {
			return false, fmt.Errorf("controller %q: the manager refused the spec: %s", id, cond.Message)
		}
		if st.ObservedRevision < rev {
			return false, nil // an older spec's troubles may be gone
		}
		warn(st)
		if cond := ctlview.Blocked(st); cond != nil {
			return false, blockedError(id, cond)
		}
		return converged(st, desired, rev), nil
	})
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if last == "" {
			last = "no status written: is the manager running?"
		}
		return fmt.Errorf("controller %q not ready after %s (%s)", id, timeout, last)
	}
	return err
}

// converged reports whether st shows revision rev (or newer) done.
func converged(st *api.ReplicationControllerStatus, desired int, rev int64) bool {
	return st.ObservedRevision >= rev && st.Replicas == desired && st.ReadyReplicas == desired
}

func progressLine(id string, st *api.ReplicationControllerStatus, desired int, rev int64) string {
	if st.ObservedRevision < rev {
		return fmt.Sprintf("%s: waiting for the manager to see the change", id)
	}
	return fmt.Sprintf("%s: %d of %d ready (%d running)", id, st.ReadyReplicas, desired, st.Replicas)
}

// invalidSpec returns the InvalidSpec condition of st when it holds.
func invalidSpec(st *api.ReplicationControllerStatus) *api.Condition {
	if cond := st.FindCondition(api.ConditionInvalidSpec); cond != nil && cond.Status != "False" {
		return cond
	}
	return nil
}

// troubleWarner returns a function that prints to stderr, as warnings,
// what keeps a status's replicas from being ready (ctlview.Troubles: slots
// that fit no node, a failed create, a crash loop), each one once while
// it lasts.
func troubleWarner(c *cli) func(st *api.ReplicationControllerStatus) {
	shown := map[string]bool{}
	return func(st *api.ReplicationControllerStatus) {
		now := map[string]bool{}
		for _, t := range ctlview.Troubles(st) {
			now[t] = true
			if !shown[t] {
				fmt.Fprintf(c.stderr, "warning: %s\n", t)
			}
		}
		shown = now
	}
}

// blockedError is the failure of a wait for controller id, which the
// manager reports blocked by cond.
func blockedError(id string, cond *api.Condition) error {
	return fmt.Errorf("controller %q is blocked (it cannot progress without a change): %s", id, cond.Message)
}

// snapshot is one controller as follow sees it.
type snapshot struct {
	// spec is the stored spec; its Controller is nil and Err set when it
	// does not decode.
	spec registry.Spec
	// deleted is set when there is no spec (any more).
	deleted bool
	// status is nil until the manager writes one (or when it does not
	// decode: the manager rewrites it at its next sync).
	status *api.ReplicationControllerStatus
}

// follow calls check with the spec and status of id, then again after
// every change of either, until check reports done (follow returns nil)
// or an error (returned), or ctx ends (ctx's error is returned). It reads
// both keys in one request and watches them from the revision after it,
// so it sees every change once and polls nothing. A watch that etcd ends
// (a compaction, a lost leader) is opened again after a fresh read, with a
// pause that grows while etcd keeps ending them at once.
func follow(ctx context.Context, cn *conn, id string, check func(snapshot) (done bool, err error)) error {
	specKey, statusKey := cn.store.ControllerKey(id), cn.store.StatusKey(id)
	pause := time.Duration(0)
	for {
		s, rev, err := readSnapshot(ctx, cn, id)
		if err != nil {
			return err
		}
		if done, err := check(s); done || err != nil {
			return err
		}
		watchCtx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		specs := cn.client.Watch(watchCtx, specKey, clientv3.WithRev(rev+1))
		statuses := cn.client.Watch(watchCtx, statusKey, clientv3.WithRev(rev+1))
		delivered, done, err := followWatches(ctx, s, specs, statuses, check)
		cancel()
		if done || err != nil {
			return err
		}
		if delivered {
			pause = 0
		}
		pause = min(max(2*pause, 100*time.Millisecond), 2*time.Second)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// followWatches applies each event of the two watches to s and calls
// check, until check is done or fails, ctx ends, or a watch ends
// (done and err both unset: follow reads again). delivered reports
// whether any event came.
//
//nolint:nilerr // a watch that etcd ended is no failure: follow reads again and watches anew
func followWatches(ctx context.Context, s snapshot, specs, statuses clientv3.WatchChan, check func(snapshot) (bool, error)) (delivered, done bool, err error) {
	for {
		var resp clientv3.WatchResponse
		var ok, isStatus bool
		select {
		case <-ctx.Done():
			return delivered, false, ctx.Err()
		case resp, ok = <-specs:
		case resp, ok = <-statuses:
			isStatus = true
		}
		if !ok || resp.Err() != nil || resp.Canceled {
			return delivered, false, nil
		}
		if len(resp.Events) == 0 {
			continue // a progress notification
		}
		delivered = true
		for _, ev := range resp.Events {
			s = s.apply(ev.Type, ev.Kv, isStatus)
		}
		if done, err := check(s); done || err != nil {
			return true, done, err
		}
	}
}

// readSnapshot reads the spec and the status of id in one request, under
// the etcd timeout as every rcctl request, and returns them with the
// revision they were read at.
func readSnapshot(ctx context.Context, cn *conn, id string) (snapshot, int64, error) {
	specKey, statusKey := cn.store.ControllerKey(id), cn.store.StatusKey(id)
	resp, err := call(ctx, cn, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return cn.client.Txn(ctx).Then(clientv3.OpGet(specKey), clientv3.OpGet(statusKey)).Commit()
	})
	if err != nil {
		if ctx.Err() != nil {
			return snapshot{}, 0, ctx.Err()
		}
		return snapshot{}, 0, fmt.Errorf("get %s: %w", specKey, err)
	}
	s := snapshot{spec: registry.Spec{ID: id}, deleted: true}
	for i, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().Kvs {
			s = s.apply(clientv3.EventTypePut, kv, i == 1)
		}
	}
	return s, resp.Header.Revision, nil
}

// apply returns s after one change of the spec key, or of the status key
// when isStatus is set.
func (s snapshot) apply(typ mvccpb.Event_EventType, kv *mvccpb.KeyValue, isStatus bool) snapshot {
	switch {
	case !isStatus && typ == clientv3.EventTypeDelete:
		s.deleted, s.spec = true, registry.Spec{ID: s.spec.ID}
	case !isStatus:
		rc, err := api.Decode(kv.Value)
		s.deleted = false
		s.spec = registry.Spec{ID: s.spec.ID, Controller: rc, Err: err, ModRevision: kv.ModRevision, CreateRevision: kv.CreateRevision}
	case typ == clientv3.EventTypeDelete:
		s.status = nil
	default:
		st, err := api.DecodeStatus(kv.Value)
		if err != nil {
			st = nil // the manager rewrites it at its next sync
		}
		s.status = st
	}
	return s
}
