package roles

// This file puts the two parts every manager plays together (docs/CONTRACT.md,
// Nodes): it acts for its node (its Docker engine), in the node's
// election, and it may lead, in the leader's election, which schedules
// the slots over the nodes and writes the statuses; a leader's term starts
// by publishing its policy (policy.go). Without LeaderElect both act at
// once.

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// Options are everything a manager's roles are built from: the daemon
// fills them from its flags, the tests and benchmarks with a fake engine
// and clock. Zero values take the agent's and the leader's defaults.
type Options struct {
	Client *clientv3.Client
	Store  *registry.Store
	Logger *slog.Logger
	// TaskControl is the node's engine; the node's manager reaches it
	// through the fence of its term (fence.go).
	TaskControl agent.TaskControlInterface
	// Node is the node's registration, without its manager, lease and
	// time, which each term fills in.
	Node api.Node
	// Identity names this manager in the elections and the registration.
	Identity string
	// LeaseDuration is the sessions' TTL: how long a standby waits after
	// the holder dies before it takes over, in whole seconds; zero is
	// DefaultLeaseDuration.
	LeaseDuration time.Duration
	// LeaderElect campaigns in the node's and the leader's elections;
	// without it both roles act at once, on a session each.
	LeaderElect bool
	// StopWhenIsolated removes the node's containers once its lease's
	// renewals stop (node.go).
	StopWhenIsolated bool

	// SyncPeriod is how often both roles go over every controller
	// without an event.
	SyncPeriod time.Duration
	// RelistPeriod is how often the node lists its containers again.
	RelistPeriod time.Duration
	// Workers is how many controllers the node syncs at once; the leader
	// decides LeaderWorkers of it at once.
	Workers int
	// BurstReplicas caps the creates (and deletes) of one node sync.
	BurstReplicas int
	// RevisionHistoryLimit is how many templates are kept per controller.
	RevisionHistoryLimit int
	// MaxReplicas is the highest replica count a spec may ask for.
	MaxReplicas int
	// DrainTimeout is how long the node's syncs in progress may go on
	// after the stop; the term waits StopWait of it for its manager.
	DrainTimeout time.Duration
	// Policy says which security-sensitive template fields are allowed;
	// the leader publishes it when its term starts.
	Policy api.SecurityPolicy
	// MaxStopGrace is the cap the node's engine puts on every
	// container's grace period; zero is none.
	MaxStopGrace time.Duration
	// NodeGrace is how long the leader lets a node be gone before it
	// moves the node's slots.
	NodeGrace time.Duration
	// Clock is the manager's time, the leader's and the node's; nil is
	// the wall clock.
	Clock leader.Clock
	// Registerer receives the node manager's metrics; nil registers
	// nowhere.
	Registerer prometheus.Registerer
	// OnLead and OnAct, when set, are told each time this manager starts
	// or stops leading, and acting for its node.
	OnLead, OnAct func(bool)
}

// DefaultLeaseDuration is Options.LeaseDuration's default, the daemon's
// --leader-elect-lease-duration.
const DefaultLeaseDuration = 15 * time.Second

// Roles are a manager's two elections and what each term runs.
type Roles struct {
	agent *nodeAgent
	node  *campaign
	lead  *campaign
	// leader is the leader of the term in progress.
	leader atomic.Pointer[leader.ReplicationManager]
}

// New builds the roles of opts: the node's agent, the leader, their
// elections and the fence of the node's Docker calls.
func New(opts Options) *Roles {
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	r := &Roles{}
	logger, store := opts.Logger, opts.Store
	r.agent = &nodeAgent{
		client: opts.Client, store: store, logger: logger.With("node", opts.Node.Name), docker: opts.TaskControl,
		identity: opts.Identity, ttl: opts.LeaseDuration, stopWhenIsolated: opts.StopWhenIsolated,
		node: opts.Node, stopWait: StopWait(opts.DrainTimeout),
		newManager: func(tc agent.TaskControlInterface, node *agent.NodeOptions) *agent.Agent {
			return agent.New(store, tc, logger, opts.agentOptions(*node))
		},
	}
	r.node = &campaign{
		client: opts.Client, logger: logger, identity: opts.Identity, ttl: opts.LeaseDuration,
		what: "act for node " + opts.Node.Name, work: r.agent.term, onLead: opts.OnAct,
	}
	r.lead = &campaign{
		client: opts.Client, logger: logger, identity: opts.Identity, ttl: opts.LeaseDuration,
		what: "lead", onLead: opts.OnLead,
		work: func(ctx context.Context, t term) error {
			o := opts.leaderOptions()
			o.Guard = t.guard()
			policy := registry.NewPolicy(opts.Policy, opts.MaxReplicas, opts.Identity)
			policy.Elected = opts.LeaderElect
			if err := publishPolicy(ctx, store, o.Guard, policy, logger); err != nil {
				return err
			}
			s := leader.NewReplicationManager(store, logger, o)
			r.leader.Store(s)
			defer r.leader.Store(nil)
			return s.Run(ctx)
		},
	}
	if opts.LeaderElect {
		r.node.key = store.NodeElectionKey(opts.Node.Name)
		r.lead.key = store.LeaderElectionKey()
	}
	return r
}

// agentOptions are the options of the node's manager for node.
func (o Options) agentOptions(node agent.NodeOptions) agent.Options {
	var now func() time.Time
	if o.Clock != nil {
		now = o.Clock.Now
	}
	return agent.Options{
		SyncPeriod:           o.SyncPeriod,
		RelistPeriod:         o.RelistPeriod,
		Workers:              o.Workers,
		BurstReplicas:        o.BurstReplicas,
		RevisionHistoryLimit: o.RevisionHistoryLimit,
		MaxReplicas:          o.MaxReplicas,
		DrainTimeout:         o.DrainTimeout,
		Policy:               o.Policy,
		MaxStopGrace:         o.MaxStopGrace,
		Node:                 node,
		Registerer:           o.Registerer,
		Now:                  now,
	}
}

// leaderOptions are the leader's options, without the guard of its term.
func (o Options) leaderOptions() leader.Options {
	return leader.Options{
		NodeGrace: o.NodeGrace, SyncPeriod: o.SyncPeriod, MaxReplicas: o.MaxReplicas,
		Policy: o.Policy, RevisionHistoryLimit: o.RevisionHistoryLimit, Workers: LeaderWorkers(o.Workers),
		Clock: o.Clock,
	}
}

// Run plays both roles until ctx ends or one fails for good; it then
// stops the other and returns the first error.
func (r *Roles) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- r.RunNode(ctx) }()
	go func() { errc <- r.RunLeader(ctx) }()
	var first error
	for range 2 {
		if err := <-errc; err != nil && first == nil {
			first = err
			stop()
		}
	}
	return first
}

// RunLeader plays the leader's part only, until ctx ends or it fails for
// good: a manager that never acts for a node (one without an engine of
// its own), or one whose node's part runs elsewhere.
func (r *Roles) RunLeader(ctx context.Context) error { return r.lead.run(ctx) }

// RunNode plays the node's part only, until ctx ends or it fails for
// good: a manager that never leads.
func (r *Roles) RunNode(ctx context.Context) error { return r.node.run(ctx) }

// Leader is the leader of the term in progress; nil while this manager
// does not lead.
func (r *Roles) Leader() *leader.ReplicationManager { return r.leader.Load() }

// Agent is the node's manager of the term in progress; nil while this
// manager does not act for its node.
func (r *Roles) Agent() *agent.Agent { return r.agent.current.Load() }

// NodeManager builds the node's manager as each term of RunNode does, on
// the node's engine and under lease, but without a term: no election, no
// registration, no fence. It is for a caller that registers the node
// under a lease of its own and runs the manager itself.
func (r *Roles) NodeManager(lease clientv3.LeaseID) *agent.Agent {
	return r.agent.newManager(r.agent.docker, &agent.NodeOptions{Name: r.agent.node.Name, Lease: lease})
}

// Leads reports whether this manager leads now.
func (r *Roles) Leads() bool { return r.lead.leading.Load() }

// Acts reports whether this manager acts for its node now.
func (r *Roles) Acts() bool { return r.node.leading.Load() }

// StandsBy reports whether another manager acts for this one's node while
// this one campaigns, ready to take over.
func (r *Roles) StandsBy(ctx context.Context) bool { return r.node.standsBy(ctx) }

// LeaderWorkers is how many controllers the leader decides at once: its
// default, or four times the node's workers when that is more, as a
// decision is short and its write waits on etcd.
func LeaderWorkers(nodeWorkers int) int {
	return max(leader.DefaultLeaderWorkers, 4*nodeWorkers)
}
