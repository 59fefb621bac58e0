package roles

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// newTestLeader returns a leader on its own etcd client, so that closing
// that client kills its session as a crash would. Options adjust it before
// it runs.
func newTestLeader(t *testing.T, srv *etcdtest.Server, name string, opts ...func(*campaign)) (*campaign, context.CancelFunc, chan error) {
	t.Helper()
	client := srv.Client(t)
	store := registry.NewStore(client, "/leadertest")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := &campaign{
		client: client, logger: logger, identity: name, ttl: 2 * time.Second, key: store.LeaderElectionKey(),
		work: managerTerm(store, &taskcontrol.Fake{}, agent.Options{}, logger),
	}
	for _, o := range opts {
		o(l)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- l.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("leader %s stopped with %v", name, err)
		}
	})
	return l, cancel, done
}

// managerTerm is a term that runs a manager of every slot on fake, fenced
// by the term's session.
func managerTerm(store *registry.Store, fake *taskcontrol.Fake, opts agent.Options, logger *slog.Logger) func(context.Context, term) error {
	return func(ctx context.Context, t term) error {
		tc := &fencedTasks{TaskControlInterface: fake, session: t.session}
		return agent.New(store, tc, logger, opts).Run(ctx)
	}
}

func TestLeaderElectionOneLeadsAndStandbyTakesOverAfterCrash(t *testing.T) {
	srv := etcdtest.Start(t)
	a, _, _ := newTestLeader(t, srv, "a")
	testpoll.Until(t, waitTimeout, "a to lead", a.leading.Load)
	b, _, _ := newTestLeader(t, srv, "b")
	observer := srv.Client(t)
	testpoll.Until(t, waitTimeout, "b to campaign behind a", func() bool {
		return slices.Equal(candidates(t, observer), []string{"a", "b"})
	})
	if b.leading.Load() {
		t.Fatal("b leads while a leads")
	}

	// a dies without resigning: its client goes away, its lease expires
	if err := a.client.Close(); err != nil {
		t.Fatal(err)
	}
	took := testpoll.Until(t, waitTimeout, "b to take over", b.leading.Load)
	if took > 2*a.ttl+time.Second {
		t.Errorf("b took over after %s, want within about the TTL (%s)", took, a.ttl)
	}
	t.Logf("handover after the leader's crash: %s", took)
}

// TestLeaderCampaignsAgainAtOnceAfterEveryTermItLed: the wait before a new
// campaign grows over failures in a row, not over a process's life. Here
// every term is led and then lost, so every wait is the first one.
func TestLeaderCampaignsAgainAtOnceAfterEveryTermItLed(t *testing.T) {
	srv := etcdtest.Start(t)
	observer := srv.Client(t)
	logs := &syncbuf.Buffer{}
	const start = 10 * time.Millisecond
	l, _, _ := newTestLeader(t, srv, "a", func(l *campaign) {
		l.retryStart, l.retryMax = start, time.Minute
		l.logger = slog.New(slog.NewTextHandler(logs, nil))
	})

	const terms = 5
	var lease clientv3.LeaseID
	for range terms {
		testpoll.Until(t, waitTimeout, "a to lead a new term", func() bool {
			id, ok := leaseOf(t, observer, "a")
			return ok && id != lease && l.leading.Load()
		})
		lease, _ = leaseOf(t, observer, "a")
		// an etcd blip longer than the TTL: the session's lease is gone
		if _, err := observer.Revoke(t.Context(), lease); err != nil {
			t.Fatalf("revoke a's lease: %v", err)
		}
	}
	testpoll.Until(t, waitTimeout, "a to lead again", func() bool {
		id, ok := leaseOf(t, observer, "a")
		return ok && id != lease && l.leading.Load()
	})

	var waits []string
	for _, m := range regexp.MustCompile(`retryIn=(\S+)`).FindAllStringSubmatch(logs.String(), -1) {
		waits = append(waits, m[1])
	}
	want := slices.Repeat([]string{start.String()}, terms)
	if !slices.Equal(waits, want) {
		t.Errorf("waits before each new campaign = %q, want %q", waits, want)
	}
}

// The waits between campaigns: retryStart doubling up to retryMax over the
// failed terms in a row. When they start over is registry.Retry's rule
// (registry/retry_test.go; a led term: the test above).
func TestCampaignWaitsDoubleFromTheStartUpToTheMax(t *testing.T) {
	for _, tt := range []struct {
		name  string
		l     *campaign
		waits []time.Duration
	}{
		{"the defaults, 1s to 30s", &campaign{}, []time.Duration{
			time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second,
		}},
		{"short bounds", &campaign{retryStart: 10 * time.Millisecond, retryMax: 25 * time.Millisecond}, []time.Duration{
			10 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond, 25 * time.Millisecond,
		}},
		{"a start above the max", &campaign{retryStart: time.Minute, retryMax: time.Second}, []time.Duration{time.Second, time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			backoff := tt.l.backoff()
			if backoff.Cap != tt.l.maxWait() {
				t.Errorf("longest wait %s, want the max %s: a term that lasts it went well", backoff.Cap, tt.l.maxWait())
			}
			for i, want := range tt.waits {
				if got := backoff.Step(); got != want {
					t.Errorf("wait %d = %s, want %s", i+1, got, want)
				}
			}
		})
	}
}

// candidates returns the identities in the election of newTestLeader's
// store, in campaign order: the leader first.
func candidates(t *testing.T, client *clientv3.Client) []string {
	t.Helper()
	var names []string
	for _, kv := range electionEntries(t, client) {
		names = append(names, string(kv.Value))
	}
	return names
}

// leaseOf returns the lease of identity's entry in the election.
func leaseOf(t *testing.T, client *clientv3.Client, identity string) (clientv3.LeaseID, bool) {
	t.Helper()
	for _, kv := range electionEntries(t, client) {
		if string(kv.Value) == identity {
			return clientv3.LeaseID(kv.Lease), true
		}
	}
	return 0, false
}

func electionEntries(t *testing.T, client *clientv3.Client) []*mvccpb.KeyValue {
	t.Helper()
	resp, err := client.Get(t.Context(), "/leadertest/election/replication-manager/", clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		t.Fatalf("read the election: %v", err)
	}
	return resp.Kvs
}

func TestLeaderResignsOnShutdownSoStandbyTakesOverAtOnce(t *testing.T) {
	srv := etcdtest.Start(t)
	a, stopA, doneA := newTestLeader(t, srv, "a")
	testpoll.Until(t, waitTimeout, "a to lead", a.leading.Load)
	b, _, _ := newTestLeader(t, srv, "b")

	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("a stopped with %v", err)
	}
	doneA <- nil // for the cleanup
	took := testpoll.Until(t, waitTimeout, "b to take over", b.leading.Load)
	if took > a.ttl {
		t.Errorf("b took over after %s, want well under the TTL: a resigned", took)
	}
}

func TestFencedTasksRefuseChangesOnceSessionIsLost(t *testing.T) {
	srv := etcdtest.Start(t)
	client := srv.Client(t)
	sessionCtx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fake := &taskcontrol.Fake{}
	session, err := newSessionForTest(sessionCtx, client)
	if err != nil {
		t.Fatal(err)
	}
	fenced := &fencedTasks{TaskControlInterface: fake, session: session}
	if _, err := fenced.CreateTask(t.Context(), api.TaskSpec{Name: "web-1"}); err != nil {
		t.Fatalf("create while the session lives: %v", err)
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fenced.CreateTask(t.Context(), api.TaskSpec{Name: "web-2"}); !errors.Is(err, ErrNotLeader) {
		t.Errorf("create after the session ended = %v, want ErrNotLeader", err)
	}
	if err := fenced.DeleteTask(t.Context(), "x"); !errors.Is(err, ErrNotLeader) {
		t.Errorf("delete after the session ended = %v, want ErrNotLeader", err)
	}
	if got := fake.Creates(); len(got) != 1 {
		t.Errorf("creates reaching Docker = %v, want only web-1", got)
	}
}

func newSessionForTest(ctx context.Context, client *clientv3.Client) (*concurrency.Session, error) {
	return concurrency.NewSession(client, concurrency.WithTTL(2), concurrency.WithContext(ctx))
}
