package agent

// One embedded etcd serves the whole package, its tests and its external
// tests (package agent_test, which reach it through EtcdClient); every
// test gets its own key prefix, so tests stay independent.

import (
	"flag"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

var etcdServer etcdtest.Shared

func TestMain(m *testing.M) {
	flag.Parse()
	briefHistories()
	os.Exit(etcdtest.RunShared(m, &etcdServer))
}

// briefCheckHistories is how many random histories the cluster's property
// test runs in make test, unless -rapid.checks says otherwise: each takes
// a cluster on the embedded etcd, and make prop runs thousands.
const briefCheckHistories = "30"

// briefHistories lowers rapid's default number of histories to
// briefCheckHistories when -rapid.checks was not given.
func briefHistories() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	if !given {
		if err := flag.Set("rapid.checks", briefCheckHistories); err != nil {
			panic(err)
		}
	}
}

// testClient returns a client of the package's embedded etcd.
func testClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return etcdServer.Client(tb)
}

// testRegistryID is the registry id of the tests' managers.
const testRegistryID = "test-registry"

// testNode is the node the tests' managers act for.
const testNode = "a"

// newController returns the 2014 example controller with id and replicas,
// its containers labelled tier=demo too.
func newController(id string, replicas int) *api.ReplicationController {
	return demospec.Controller(id, "demo-task:latest", replicas, map[string]string{"tier": "demo"})
}

// waitTimeout bounds every wait of the package's tests.
const waitTimeout = 20 * time.Second
