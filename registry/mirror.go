package registry

// This file keeps a copy of one etcd prefix in step, the one
// list-then-watch loop of the code (the leader's nodes, assignments,
// reports and specs; a node's specs and its own assignments): list the
// prefix at a revision, hand the whole list over, then watch from the
// revision after it and hand over each change, and list again whenever
// the watch cannot go on (compaction, a closed channel, a lost leader).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// KV is one key of a mirrored prefix.
type KV struct {
	Key               string
	Value             []byte
	ModRev, CreateRev int64
}

// MirrorTarget receives a prefix: reset with every key after each list,
// then put and del for each change, in revision order.
type MirrorTarget interface {
	Reset(keys []KV, rev int64)
	Put(k KV)
	Del(key string, rev int64)
}

// RestartTarget is a mirrorTarget that counts the watch's restarts.
type RestartTarget interface {
	Restarted(err error)
}

// ProgressTarget is a mirrorTarget that also wants to know the revision
// a watch has reached without a change (etcd's progress notifications).
type ProgressTarget interface {
	Progress(rev int64)
}

// Mirror follows prefix into t until ctx ends (it then returns nil). While
// etcd is away it keeps trying, on a Retry whose tries get going once a
// list has answered, and says so through warn; it returns an error only
// when etcd refuses this manager for good. A compacted watch is not a
// failure: the same try lists again at once.
func (s *Store) Mirror(ctx context.Context, prefix string, t MirrorTarget, warn func(msg string, args ...any)) error {
	restarted := func(err error) {
		if r, ok := t.(RestartTarget); ok {
			r.Restarted(err)
		}
	}
	err := Retry{Failed: func(err error, delay time.Duration) {
		restarted(err)
		warn("watch restarting", "prefix", prefix, "retryIn", delay, "err", err)
	}}.Do(ctx, func() (up bool, err error) {
		for {
			rev, err := s.MirrorList(ctx, prefix, t)
			if err != nil {
				return up, err
			}
			up = true
			err = s.MirrorWatch(ctx, prefix, rev+1, t)
			if ctx.Err() != nil || !errors.Is(err, ErrWatchCompacted) {
				return up, err
			}
			// nothing is wrong with etcd: list again at once
			restarted(err)
			warn("watch restarting", "prefix", prefix, "retryIn", time.Duration(0), "err", err)
		}
	})
	if err != nil {
		return UnlessStopped(ctx, fmt.Errorf("watch %s: %w", prefix, err))
	}
	return nil
}

func (s *Store) MirrorList(ctx context.Context, prefix string, t MirrorTarget) (int64, error) {
	var keys []KV
	rev, err := s.listPrefix(ctx, prefix, func(key string, value []byte, modRev, createRev int64) {
		keys = append(keys, KV{Key: key, Value: value, ModRev: modRev, CreateRev: createRev})
	})
	if err != nil {
		return 0, err
	}
	t.Reset(keys, rev)
	return rev, nil
}

// mirrorStream is the context of prefix's watches: they require a leader,
// and have a gRPC stream of their own (the client puts the watches of
// contexts with the same metadata on one stream). etcd answers a progress
// request on a stream only once every watch on it has caught up, and
// drops it while one starts after the newest revision (a watch from a
// list's revision + 1, nothing written since), so a mirror listed just
// now would hold back the answer to another that waits for it.
func mirrorStream(ctx context.Context, prefix string) context.Context {
	return metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx), "mirror", prefix)
}

// RequestProgress asks etcd to tell the watches of prefix's mirrors the
// revision they have reached (ProgressTarget); it is dropped while one of
// them has not caught up.
func (s *Store) RequestProgress(ctx context.Context, prefix string) error {
	return s.client.RequestProgress(mirrorStream(ctx, prefix))
}

// MirrorWatch applies the changes from revision rev on until the watch
// fails; it always returns why it stopped.
func (s *Store) MirrorWatch(ctx context.Context, prefix string, rev int64, t MirrorTarget) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range s.client.Watch(mirrorStream(ctx, prefix), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted) {
			return fmt.Errorf("%w: wanted %d, oldest is %d", ErrWatchCompacted, rev, resp.CompactRevision)
		}
		if err := resp.Err(); err != nil {
			return err
		}
		if resp.IsProgressNotify() {
			if p, ok := t.(ProgressTarget); ok {
				p.Progress(resp.Header.Revision)
			}
			continue
		}
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypeDelete {
				t.Del(string(ev.Kv.Key), ev.Kv.ModRevision)
				continue
			}
			t.Put(KV{Key: string(ev.Kv.Key), Value: ev.Kv.Value, ModRev: ev.Kv.ModRevision, CreateRev: ev.Kv.CreateRevision})
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrWatchClosed
}
