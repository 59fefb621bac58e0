package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/registry"
)

// A stop that cuts off a write of events in flight is no etcd outage: the
// cut batch goes with the last ones, within the stop's second, and
// nothing is warned of (CI: "recording events failed" at a clean stop).
func TestAStopThatCutsAnEventWriteOffWarnsOfNothing(t *testing.T) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: time.Second, Logger: nil})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	logs := &syncbuf.Buffer{}
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "dropped"})
	// a write waits for etcd far longer than the test: only the stop ends it
	r := newEventRecorder(registry.NewStore(client, "/away"), time.Now, time.Minute, dropped, slog.New(slog.NewTextHandler(logs, nil)))
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	r.record("web", api.EventNormal, "Created", "created 1 container(s): web-1")
	time.Sleep(100 * time.Millisecond) // the write is in flight
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorder did not stop within 10s")
	}
	if strings.Contains(logs.String(), "recording events failed") {
		t.Errorf("a stop was warned of as an outage:\n%s", logs)
	}
	if n := testutil.ToFloat64(dropped); n != 1 {
		t.Errorf("%v events counted dropped, want the one etcd never took", n)
	}
}
