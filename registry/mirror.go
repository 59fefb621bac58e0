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
)

// kv is one key of a mirrored prefix.
type kv struct {
	key               string
	value             []byte
	modRev, createRev int64
}

// mirrorTarget receives a prefix: reset with every key after each list,
// then put and del for each change, in revision order.
type mirrorTarget interface {
	reset(keys []kv, rev int64)
	put(k kv)
	del(key string, rev int64)
}

// restartTarget is a mirrorTarget that counts the watch's restarts.
type restartTarget interface {
	restarted(err error)
}

// progressTarget is a mirrorTarget that also wants to know the revision
// a watch has reached without a change (etcd's progress notifications).
type progressTarget interface {
	progress(rev int64)
}

// mirror follows prefix into t until ctx ends (it then returns nil). While
// etcd is away it keeps trying, with a capped backoff, and says so through
// warn; it returns an error only when etcd refuses this manager for good.
func (s *Store) mirror(ctx context.Context, prefix string, t mirrorTarget, warn func(msg string, args ...any)) error {
	backoff := retryBackoff()
	for ctx.Err() == nil {
		rev, err := s.mirrorList(ctx, prefix, t)
		if err == nil {
			backoff = retryBackoff()
			err = s.mirrorWatch(ctx, prefix, rev+1, t)
		}
		if ctx.Err() != nil || Refused(err) {
			return unlessStopped(ctx, fmt.Errorf("watch %s: %w", prefix, err))
		}
		if r, ok := t.(restartTarget); ok {
			r.restarted(err)
		}
		delay := backoff.Step()
		if errors.Is(err, errWatchCompacted) {
			delay = 0 // nothing is wrong with etcd: list again at once
		}
		warn("watch restarting", "prefix", prefix, "retryIn", delay, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
	return nil
}

func (s *Store) mirrorList(ctx context.Context, prefix string, t mirrorTarget) (int64, error) {
	var keys []kv
	rev, err := s.listPrefix(ctx, prefix, func(key string, value []byte, modRev, createRev int64) {
		keys = append(keys, kv{key: key, value: value, modRev: modRev, createRev: createRev})
	})
	if err != nil {
		return 0, err
	}
	t.reset(keys, rev)
	return rev, nil
}

// mirrorWatch applies the changes from revision rev on until the watch
// fails; it always returns why it stopped.
func (s *Store) mirrorWatch(ctx context.Context, prefix string, rev int64, t mirrorTarget) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range s.client.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted) {
			return fmt.Errorf("%w: wanted %d, oldest is %d", errWatchCompacted, rev, resp.CompactRevision)
		}
		if err := resp.Err(); err != nil {
			return err
		}
		if resp.IsProgressNotify() {
			if p, ok := t.(progressTarget); ok {
				p.progress(resp.Header.Revision)
			}
			continue
		}
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypeDelete {
				t.del(string(ev.Kv.Key), ev.Kv.ModRevision)
				continue
			}
			t.put(kv{key: string(ev.Kv.Key), value: ev.Kv.Value, modRev: ev.Kv.ModRevision, createRev: ev.Kv.CreateRevision})
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errWatchClosed
}
