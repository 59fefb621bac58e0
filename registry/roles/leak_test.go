package roles

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// A manager that has stopped leaves nothing running: no worker, watch,
// ticker or retry loop of its leader or its node. A goroutine left behind
// would go on costing the process that restarts its roles (the daemon
// after a lost term, a benchmark run after run).
func TestAStoppedHostLeavesNoGoroutineBehind(t *testing.T) {
	// the package's etcd serves before the goroutines are counted: its
	// listeners' goroutines start once a client has reached them
	if _, err := etcdServer.Client(t).Get(t.Context(), "/"); err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	// a client of the host's own, closed once it has stopped: the etcd
	// client keeps its connection and lease streams until then
	client := testClient(t)
	store := newStore(t, client, "leak")

	const controllers, replicas = 5, 2
	putControllers(t, t.Context(), client, store, controllers, func(i int) *api.ReplicationController {
		return newController(fmt.Sprintf("leak-%d", i), replicas)
	})
	fake := &taskcontrol.Fake{}
	h, err := startHost(t.Context(), client, store, fake, testLogger(t), func(*Options) {})
	if err != nil {
		t.Fatal(err)
	}
	testpoll.Until(t, time.Minute, "every container", func() bool { return fake.Len() == controllers*replicas })
	closed := client.Close()
	if errors.Is(closed, context.Canceled) {
		closed = nil // what Close of a client without a connection (in process) returns
	}
	if err := errors.Join(h.stop(), closed); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}
