package registry

import (
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

// One embedded etcd serves the package's tests; each takes a key prefix
// of its own.
var etcdServer etcdtest.Shared

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m, &etcdServer)) }

// testClient returns a client of the package's embedded etcd.
func testClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return etcdServer.Client(tb)
}
