package roles

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testlog"
	"github.com/replication-manager/replication-manager/registry"
)

// One embedded etcd serves the managers of the package's cluster tests and
// benchmarks; each gets a key prefix of its own (newStore). The election
// tests start an etcd of their own, to kill it.
var etcdServer etcdtest.Shared

func TestMain(m *testing.M) {
	if url := os.Getenv(memoryChildEtcd); url != "" {
		// the child of BenchmarkHostMemory: the host alone, on the
		// parent's etcd
		etcdServer.Use(etcdtest.Dial(url))
		os.Exit(m.Run())
	}
	os.Exit(etcdtest.RunShared(m, &etcdServer))
}

// waitTimeout bounds every wait of the package's tests.
const waitTimeout = 20 * time.Second

// testClient returns a client of the package's embedded etcd: the one
// the daemon's roles have on the etcd it embeds, which calls the server
// in this process. Managers on other hosts reach etcd over the network;
// the tests of packages agent and leader, and the end-to-end tests of
// several nodes, use such clients.
func testClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return etcdServer.RolesClient(tb)
}

// stores numbers the stores of a test binary.
var stores atomic.Int64

// newStore returns a store on the package's etcd under a prefix of its
// own, also when -count runs the test again.
func newStore(tb testing.TB, client *clientv3.Client, root string) *registry.Store {
	tb.Helper()
	return registry.NewStore(client, fmt.Sprintf("/%s/%s-%d", root, strings.ReplaceAll(tb.Name(), "/", "_"), stores.Add(1)))
}

// testLogger is the package tests' logger (internal/testlog).
func testLogger(tb testing.TB) *slog.Logger {
	tb.Helper()
	return testlog.Logger()
}

// newController returns the 2014 example controller with id and replicas,
// its containers labelled tier=demo too.
func newController(id string, replicas int) *api.ReplicationController {
	return demospec.Controller(id, "demo-task:latest", replicas, map[string]string{"tier": "demo"})
}
