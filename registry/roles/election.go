package roles

// This file runs work only while this instance holds an election: several
// managers can share one etcd, exactly one acts, and a standby takes over
// within the session TTL after the holder dies. There are two elections:
// the leader's, whose term runs the leader (roles.go), and one per node,
// whose term runs the node's manager (node.go). The Docker side is fenced
// by the node's session (fence.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/replication-manager/replication-manager/registry"
)

// campaign runs work once per term it wins in the election at key.
type campaign struct {
	client   *clientv3.Client
	logger   *slog.Logger
	identity string
	ttl      time.Duration
	// key is the election; empty acts at once, on a session but without
	// an election (--leader-elect=false).
	key string
	// what names the role in logs: "lead", "act for node a".
	what string
	// work runs one term, until ctx ends (the term is over) or it fails.
	work    func(ctx context.Context, t term) error
	leading atomic.Bool
	onLead  func(bool)
	// election is the election of the campaign in progress, if any.
	election atomic.Pointer[concurrency.Election]
	// retryStart and retryMax bound the wait between campaigns; zero
	// means defaultRetryStart and defaultRetryMax.
	retryStart, retryMax time.Duration
}

// The wait before campaigning again after a term that failed: it doubles
// from defaultRetryStart up to defaultRetryMax over failures in a row.
const (
	defaultRetryStart = time.Second
	defaultRetryMax   = 30 * time.Second
)

// HandoverTimeout bounds the end of a term: the resign and the revoke of
// the session's lease together. With etcd answering each takes a round
// trip; with etcd away neither can succeed, waiting longer does not help,
// and the lease runs out by itself within the TTL.
const HandoverTimeout = 2 * time.Second

// DefaultIdentity names this instance in the elections: host and pid.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// term is one term of an election: the session it lives on, and the
// election won (nil without one).
type term struct {
	session  *concurrency.Session
	election *concurrency.Election
	// stopped is closed when the daemon stops, not when the term ends:
	// work's context ends on either.
	stopped <-chan struct{}
}

// guard returns the comparisons that hold only while the term lasts, for
// writes that only the holder may make.
func (t term) guard() []clientv3.Cmp {
	if t.election == nil {
		return nil
	}
	return []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(t.election.Key()), "=", t.election.Rev())}
}

// run campaigns, works until the session is lost, and campaigns again,
// until ctx ends; it then resigns so that a standby takes over at once.
// The campaigns run on a registry.Retry: the waits double over the failed
// terms in a row, and start over after a term that went well, one in
// which this instance led (it got going) or that lasted at least the
// longest wait (a standby's long campaign). Otherwise every etcd blip
// after a few lost terms, however far apart, would cost the longest wait
// without a leader. A refusal by etcd ends the campaigns: campaigning
// again cannot help.
func (l *campaign) run(ctx context.Context) error {
	err := registry.Retry{Delays: l.backoff, Failed: func(err error, delay time.Duration) {
		l.logger.Warn("election: starting over", "role", l.what, "retryIn", delay, "err", err)
	}}.Do(ctx, func() (bool, error) { return l.term(ctx) })
	return registry.UnlessStopped(ctx, err) // a stop, not a failure: term has resigned
}

// backoff is the waits between campaigns as they are before a failure.
// No jitter: with etcd away a campaign waits in its lease grant, so the
// managers' grants go out as their clients reconnect, and gRPC's reconnect
// backoff (etcd.go) has jitter of its own.
func (l *campaign) backoff() wait.Backoff {
	start := l.retryStart
	if start <= 0 {
		start = defaultRetryStart
	}
	limit := l.maxWait()
	return wait.Backoff{Duration: min(start, limit), Factor: 2, Steps: math.MaxInt, Cap: limit}
}

func (l *campaign) maxWait() time.Duration {
	if l.retryMax <= 0 {
		return defaultRetryMax
	}
	return l.retryMax
}

// term is one campaign and, if won, one term. led says whether it won.
func (l *campaign) term(ctx context.Context) (led bool, err error) {
	// the election's client's context (electionClient), ended with the term
	clientCtx, endClient := context.WithCancel(ctx)
	defer endClient()
	session, err := l.newSession(ctx, clientCtx)
	if err != nil {
		return false, fmt.Errorf("election session: %w", err)
	}
	t := term{session: session, stopped: ctx.Done()}
	elected := false
	defer func() { l.endTerm(ctx, t, elected) }()
	if l.key != "" {
		t.election = concurrency.NewElection(session, l.key)
		l.election.Store(t.election)
		defer l.election.Store(nil)
		l.logger.Info("waiting for my turn", "role", l.what, "identity", l.identity, "election", l.key)
		if err := t.election.Campaign(ctx, l.identity); err != nil {
			return false, fmt.Errorf("campaign: %w", err)
		}
		elected = true
		l.logger.Info("elected", "role", l.what, "identity", l.identity)
	}
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
			// lost during a stop's drain: the stop goes on regardless
			if ctx.Err() == nil {
				l.logger.Warn("etcd session ended; stopping", "role", l.what, "identity", l.identity)
			}
			cancel()
		case <-leadCtx.Done():
		}
	}()
	err = l.work(leadCtx, t)

	if ctx.Err() != nil {
		return true, err // a stop: endTerm resigns
	}
	if err == nil {
		err = errors.New("term ended")
	}
	return true, err
}

// newSession grants the term's lease and keeps it alive. The grant waits
// for etcd as long as ctx lasts, and no longer: a stop while etcd is away
// must not wait for it. The renewals outlive ctx: on a stop the term stays
// fenced in while its work drains, then endTerm ends them. The session's
// client is electionClient's, on clientCtx.
func (l *campaign) newSession(ctx, clientCtx context.Context) (*concurrency.Session, error) {
	ttl := int(l.ttl / time.Second)
	l.logger.Debug("granting a session lease", "role", l.what, "ttl", l.ttl)
	granted, err := l.client.Grant(ctx, int64(ttl))
	if err != nil {
		return nil, err
	}
	session, err := concurrency.NewSession(electionClient(clientCtx, l.client), concurrency.WithTTL(ttl),
		concurrency.WithLease(granted.ID), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		// the client is closed: nothing to revoke with, the lease runs out
		return nil, err
	}
	return session, nil
}

// electionClient is client as the session and the election see it, but
// with ctx as its own context. Election.Campaign, when its context ends
// while it waits for its turn, resigns with the client's context, and the
// daemon's client's context ends only when the client is closed, after the
// roles have stopped: with etcd away, a standby's stop would wait there
// for ever. With ctx (ended by the stop) that resign gives up at once, and
// endTerm's revoke removes the campaign's key instead. The calls go
// through client's own KV, Lease and Watcher; this one is never closed
// (that would close theirs): ending ctx is its end.
func electionClient(ctx context.Context, client *clientv3.Client) *clientv3.Client {
	c := clientv3.NewCtxClient(ctx, clientv3.WithZapLogger(client.GetLogger()))
	c.KV, c.Lease, c.Watcher = client.KV, client.Lease, client.Watcher
	return c
}

// endTerm ends t's session, whichever way the term ended. It stops the
// lease's renewals first, so that the term's Docker calls are fenced off
// (fencedTasks) before anyone can take over; on a stop it then resigns if
// elected, so that a standby takes over at once instead of after the TTL;
// last it revokes the lease, which takes the node's registration and
// reports (or a campaign's key) with it. The resign and the revoke share
// one deadline, HandoverTimeout, derived from ctx without its cancel: on a
// stop ctx has ended already. With etcd away both fail, and the lease runs
// out by itself within the TTL. concurrency.Session.Close is not used: it
// revokes with a timeout of the whole TTL (15s by default), from the
// session's context, which outlives the stop.
func (l *campaign) endTerm(ctx context.Context, t term, elected bool) {
	t.session.Orphan()
	stopping := ctx.Err() != nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), HandoverTimeout)
	defer cancel()
	if stopping && elected {
		if err := t.election.Resign(ctx); err != nil {
			l.logger.Warn("resign failed; a standby takes over once the lease runs out", "role", l.what, "ttl", l.ttl, "err", err)
		} else {
			l.logger.Info("resigned", "role", l.what, "identity", l.identity)
		}
	}
	if ctx.Err() != nil {
		return // etcd did not answer the resign within the deadline: nor would it the revoke
	}
	if _, err := l.client.Revoke(ctx, t.session.Lease()); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		level := slog.LevelDebug // the term is lost already
		if stopping {
			level = slog.LevelWarn
		}
		l.logger.Log(ctx, level, "revoking the election's lease failed; it runs out by itself", "role", l.what, "ttl", l.ttl, "err", err)
	}
}

// standsBy reports whether this instance campaigns while another one holds
// the election: it is ready to take over, not starting.
func (l *campaign) standsBy(ctx context.Context) bool {
	e := l.election.Load()
	if e == nil || l.leading.Load() {
		return false
	}
	resp, err := e.Leader(ctx)
	return err == nil && len(resp.Kvs) > 0 && string(resp.Kvs[0].Value) != l.identity
}

func (l *campaign) setLeading(v bool) {
	l.leading.Store(v)
	if l.onLead != nil {
		l.onLead(v)
	}
}
