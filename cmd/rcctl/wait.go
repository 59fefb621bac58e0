package main

// wait follows a controller's status until the manager reports it
// converged (the newest spec observed, every replica ready) or a timeout
// passes, printing progress as "N of M ready" when it changes. It watches
// the status key in etcd and also reads it every second, so a missed watch
// event costs at most a second.

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
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
// revision rev with every replica ready.
func (c *cli) waitForController(ctx context.Context, cn *conn, id string, rev int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	watch := cn.client.Watch(clientv3.WithRequireLeader(ctx), cn.store.StatusKey(id))
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()

	last := ""
	var lastFailure string
	for {
		spec, err := cn.store.GetController(ctx, id)
		if errors.Is(err, registry.ErrNotFound) {
			return fmt.Errorf("controller %q was deleted while waiting", id)
		}
		if err != nil && ctx.Err() == nil {
			return cn.explain(err)
		}
		st, err := cn.store.GetStatus(ctx, id)
		if err != nil && !errors.Is(err, registry.ErrNotFound) && ctx.Err() == nil {
			return cn.explain(err)
		}
		if err == nil && spec.Controller != nil {
			desired := spec.Controller.DesiredState.Replicas
			line := progressLine(id, st, desired, rev)
			if line != last {
				fmt.Fprintln(c.stdout, line)
				last = line
			}
			if cond := st.FindCondition(api.ConditionInvalidSpec); cond != nil && st.ObservedRevision >= rev {
				return fmt.Errorf("controller %q: the manager refused the spec: %s", id, cond.Message)
			}
			if cond := st.FindCondition(api.ConditionReplicaFailure); cond != nil && cond.Message != lastFailure {
				fmt.Fprintf(c.stderr, "warning: %s: %s\n", cond.Reason, cond.Message)
				lastFailure = cond.Message
			}
			if converged(st, desired, rev) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				if last == "" {
					last = "no status written: is the manager running?"
				}
				return fmt.Errorf("controller %q not ready after %s (%s)", id, timeout, last)
			}
			return ctx.Err()
		case <-watch:
		case <-ticker.C:
		}
	}
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
