package bench

// This file is the end-to-end part: a new controller of one replica, from
// the spec write until its container runs and its status in etcd says
// readyReplicas 1, as a user of `rcctl apply --wait` sees it. Each try
// also times one plain create+start of the image, the least the manager
// can take; the two alternate in which goes first, so that the machine's
// noise hits both sample sets alike.

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// measureEndToEnd writes tries controllers one after the other, each
// deleted before the next, and takes as many plain create+starts between
// them.
func (e *dockerEnv) measureEndToEnd(ctx context.Context, tries int, res *DockerResults) error {
	for i := range tries {
		if i%2 == 0 {
			if err := e.endToEndPlain(ctx, i, res); err != nil {
				return err
			}
		}
		if err := e.endToEndManager(ctx, i, res); err != nil {
			return err
		}
		if i%2 == 1 {
			if err := e.endToEndPlain(ctx, i, res); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(e.progress, "end to end: p50 %s, p99 %s; plain create+start alongside: p50 %s, p99 %s\n",
		fmtDuration(res.EndToEnd.Percentile(50)), fmtDuration(res.EndToEnd.Percentile(99)),
		fmtDuration(res.EndToEndPlain.Percentile(50)), fmtDuration(res.EndToEndPlain.Percentile(99)))
	return nil
}

// endToEndManager is try i of the manager: a new controller, timed, then
// deleted.
func (e *dockerEnv) endToEndManager(ctx context.Context, i int, res *DockerResults) error {
	id := fmt.Sprintf("rmbench-%s-e2e-%d", e.runID, i+1)
	running, status, err := e.endToEndOnce(ctx, id)
	if err != nil {
		return fmt.Errorf("end to end %d: %w", i+1, err)
	}
	res.EndToEndRunning = append(res.EndToEndRunning, running)
	res.EndToEndStatus = append(res.EndToEndStatus, status)
	res.EndToEnd = append(res.EndToEnd, max(running, status))

	match := labelled(api.LabelController, id)
	if _, err := e.timeChange(ctx, func() error { return e.daemon.store.DeleteController(ctx, id) }, "destroy", 1, match); err != nil {
		return fmt.Errorf("end to end %d: delete: %w", i+1, err)
	}
	return sleepCtx(ctx, 200*time.Millisecond)
}

// endToEndPlain is try i of the plain create+start.
func (e *dockerEnv) endToEndPlain(ctx context.Context, i int, res *DockerResults) error {
	d, err := e.plainStart(ctx, fmt.Sprintf("rmbench-%s-e2eplain-%d", e.runID, i+1))
	if err != nil {
		return fmt.Errorf("end to end %d: %w", i+1, err)
	}
	res.EndToEndPlain = append(res.EndToEndPlain, d)
	return sleepCtx(ctx, 200*time.Millisecond)
}

// endToEndOnce creates controller id and returns how long until its
// container started and until its status said readyReplicas 1.
func (e *dockerEnv) endToEndOnce(ctx context.Context, id string) (running, status time.Duration, err error) {
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := e.daemon.client.Watch(watchCtx, e.daemon.store.StatusKey(id), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return 0, 0, fmt.Errorf("watch status: %w", resp.Err())
	}
	ready := make(chan time.Time, 1)
	go func() {
		for resp := range watch {
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut {
					continue
				}
				if st, err := api.DecodeStatus(ev.Kv.Value); err == nil && st.ReadyReplicas >= 1 {
					ready <- time.Now()
					return
				}
			}
		}
	}()

	mark := e.rec.mark()
	start := time.Now()
	if _, err := e.daemon.store.CreateController(ctx, newController(id, e.image, 1, e.runLabels("manager"))); err != nil {
		return 0, 0, err
	}
	ev, err := e.rec.waitDistinct(ctx, mark, "start", 1, changeTimeout, labelled(api.LabelController, id))
	if err != nil {
		return 0, 0, err
	}
	select {
	case at := <-ready:
		return ev.At.Sub(start), at.Sub(start), nil
	case <-time.After(changeTimeout):
		return 0, 0, fmt.Errorf("no status with readyReplicas 1 within %s", changeTimeout)
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}
