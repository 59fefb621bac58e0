package agent_test

// The package's external tests build their managers as the daemon does
// (registry/roles, which imports this package): the leader runs its part
// of a manager of roles.New, and each node's manager is the one that
// manager's terms build (Roles.NodeManager), stepped by hand through the
// hooks of export_test.go.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// waitTimeout bounds every wait of the external tests.
const waitTimeout = 20 * time.Second

// stores numbers the stores of a test binary.
var stores atomic.Int64

// newStore returns a store on the package's embedded etcd under a prefix
// of its own, also when -count runs the test again.
func newStore(tb testing.TB) *registry.Store {
	tb.Helper()
	return registry.NewStore(agent.EtcdClient(tb), fmt.Sprintf("/test/%s-%d", strings.ReplaceAll(tb.Name(), "/", "_"), stores.Add(1)))
}

// runLeader runs the leader's part of the manager of opts (roles.New,
// RunLeader) and returns its leader once it leads. stop ends it, and
// fails when RunLeader failed or when the leader's term ended before the
// stop (the leader failed and a new term began).
func runLeader(tb testing.TB, opts roles.Options) (l *leader.ReplicationManager, stop func() error) {
	tb.Helper()
	var terms atomic.Int32
	opts.OnLead = func(leads bool) {
		if leads {
			terms.Add(1)
		}
	}
	r := roles.New(opts)
	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.Context()))
	done := make(chan error, 1)
	go func() { done <- r.RunLeader(ctx) }()
	stop = sync.OnceValue(func() error {
		cancel()
		if err := <-done; err != nil {
			return err
		}
		if n := terms.Load(); n > 1 {
			return fmt.Errorf("the leader's term ended %d times before the stop", n-1)
		}
		return nil
	})
	tb.Cleanup(func() { _ = stop() }) // also when the test fails first
	testpoll.Until(tb, waitTimeout, "the manager to lead", func() bool { return r.Leader() != nil })
	return r.Leader(), stop
}
