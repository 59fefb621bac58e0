package leader

// This file drives the leader one decision at a time, without Run's
// mirrors, queue and loop: the same code, on the caller's goroutine, from
// etcd as it is at each step. The tests of a whole host use it to take a
// leader, a node and their writes in a fixed order.

import "context"

// Refresh brings the leader's view up to etcd: the statuses and history
// the first time, as Run reads them before anything else, then one list
// of every prefix the mirrors follow.
func (s *ReplicationManager) Refresh(ctx context.Context) error {
	if !s.loaded {
		if err := s.readRegistry(ctx); err != nil {
			return err
		}
		s.loaded = true
	}
	for prefix, target := range s.targets() {
		if _, err := s.store.MirrorList(ctx, prefix, target); err != nil {
			return err
		}
	}
	return nil
}

// Sync decides controller id at once, outside the queue, as the loop of
// Run would, and writes the decision alone. While Run runs, it only
// queues id in the lane of changes, for the loop.
func (s *ReplicationManager) Sync(ctx context.Context, id string) error {
	var err error
	s.onLoop(func() {
		if s.term != nil {
			s.queue.add(id)
			return
		}
		err = s.syncReplicationController(ctx, id)
	})
	return err
}
