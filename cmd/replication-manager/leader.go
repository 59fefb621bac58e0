package main

// This file runs the manager only while this instance leads: several
// managers can share one etcd, exactly one acts, and a standby takes over
// within the session TTL after the leader dies. The Docker side is fenced
// by the session: once it is lost, no create, rename or delete goes out,
// even from a sync already in progress.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// errNotLeader is returned by fenced Docker calls after leadership is lost.
var errNotLeader = errors.New("election: not leader")

// leader runs one manager per term of leadership.
type leader struct {
	client   *clientv3.Client
	store    *registry.Store
	logger   *slog.Logger
	identity string
	ttl      time.Duration
	// newManager builds the manager of a term on the fenced task control.
	newManager func(tc registry.TaskControlInterface) *registry.ReplicationManager
	// current is the manager of the term in progress, for /readyz.
	current atomic.Pointer[registry.ReplicationManager]
	leading atomic.Bool
	onLead  func(bool)
}

// defaultIdentity names this instance in the election: host and pid.
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// run campaigns, leads until the session is lost, and campaigns again,
// until ctx ends; it then resigns so that a standby takes over at once.
func (l *leader) run(ctx context.Context, tc registry.TaskControlInterface) error {
	key := l.store.Prefix() + "/election/replication-manager"
	backoff := time.Second
	for {
		err := l.term(ctx, key, tc)
		select {
		case <-ctx.Done():
			return nil // a stop, not a failure: term has resigned
		default:
		}
		l.logger.Warn("leader election: starting over", "retryIn", backoff, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// term is one campaign and, if won, one term of leadership.
func (l *leader) term(ctx context.Context, key string, tc registry.TaskControlInterface) error {
	// The session outlives ctx: on shutdown the leader stays fenced in
	// while its syncs drain, then resigns and revokes its lease itself.
	session, err := concurrency.NewSession(l.client, concurrency.WithTTL(int(l.ttl/time.Second)),
		concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return fmt.Errorf("election session: %w", err)
	}
	defer func() { _ = session.Close() }() // revokes the lease; it expires anyway
	election := concurrency.NewElection(session, key)
	l.logger.Info("waiting to lead", "identity", l.identity, "election", key)
	if err := election.Campaign(ctx, l.identity); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	l.logger.Info("became leader", "identity", l.identity)
	l.setLeading(true)
	defer l.setLeading(false)

	leadCtx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	defer func() {
		cancel()
		<-watched // so that it cannot mark a later term as not leading
	}()
	go func() {
		defer close(watched)
		select {
		case <-session.Done():
			// Fenced from now on: no change reaches Docker, so say so at
			// once, not after the syncs in progress have drained.
			l.setLeading(false)
			// the session also ends when ctx does: that is a shutdown, not a loss
			if ctx.Err() == nil {
				l.logger.Warn("lost leadership: etcd session ended; stopping all changes", "identity", l.identity)
			}
			cancel()
		case <-leadCtx.Done():
		}
	}()
	rm := l.newManager(&fencedTasks{TaskControlInterface: tc, session: session})
	l.current.Store(rm)
	defer l.current.Store(nil)
	err = rm.Run(leadCtx)

	if ctx.Err() != nil {
		// shutting down: hand over now instead of after the TTL
		resignCtx, cancelResign := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancelResign()
		if rerr := election.Resign(resignCtx); rerr != nil {
			l.logger.Warn("resign leadership", "err", rerr)
		} else {
			l.logger.Info("resigned leadership", "identity", l.identity)
		}
		return err
	}
	if err == nil {
		err = errors.New("lost leadership")
	}
	return err
}

func (l *leader) setLeading(v bool) {
	l.leading.Store(v)
	if l.onLead != nil {
		l.onLead(v)
	}
}

// fencedTasks refuses every change to Docker once the session is gone.
type fencedTasks struct {
	registry.TaskControlInterface
	session *concurrency.Session
}

func (f *fencedTasks) fenced() error {
	select {
	case <-f.session.Done():
		return errNotLeader
	default:
		return nil
	}
}

func (f *fencedTasks) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	if err := f.fenced(); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
	}
	return f.TaskControlInterface.CreateTask(ctx, spec)
}

func (f *fencedTasks) DeleteTask(ctx context.Context, id string) error {
	if err := f.fenced(); err != nil {
		return err
	}
	return f.TaskControlInterface.DeleteTask(ctx, id)
}

func (f *fencedTasks) RenameTask(ctx context.Context, id, newName string) error {
	if err := f.fenced(); err != nil {
		return err
	}
	return f.TaskControlInterface.RenameTask(ctx, id, newName)
}
