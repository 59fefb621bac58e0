package main

// This file is what the HTTP endpoints know while the daemon starts. serve
// listens before anything that can block (the embedded etcd's start, the
// engine's docker info, which waits for Docker to answer), so that /livez
// answers at once and /readyz, /metrics and the status page say what is
// missing. Each part is published here once it is up; until then a check
// fails naming it, and the page says the manager is starting.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// etcdParts are the etcd client and the store on it, once connected.
type etcdParts struct {
	client *clientv3.Client
	store  *registry.Store
}

// startup holds the parts of the daemon that are up so far; nil until
// each one is.
type startup struct {
	etcd  atomic.Pointer[etcdParts]
	roles atomic.Pointer[roles.Roles]
}

// leaderOfTerm returns the leader of the term in progress, nil when
// this manager does not lead (or has not started its roles yet).
func (s *startup) leaderOfTerm() *leader.ReplicationManager {
	r := s.roles.Load()
	if r == nil {
		return nil
	}
	return r.Leader()
}

// dockerAddress is where the daemon reaches Docker, as a check names it:
// --docker-host, else DOCKER_HOST, else the client's default socket.
func dockerAddress(opts *options) string {
	return cmp.Or(opts.dockerHost(), client.DefaultDockerHost)
}

// etcdAddress is the etcd the daemon uses, as a check names it:
// --etcd-servers, else the embedded etcd at its client URLs.
func etcdAddress(opts *options) string {
	if len(opts.EtcdServers) > 0 {
		return strings.Join(opts.EtcdServers, ",")
	}
	return "the embedded etcd (" + opts.EtcdListenClientURLs + ")"
}

// readinessChecks are /readyz's checks: etcd and Docker answer, and the
// node's manager has listed the controllers (or another manager acts for
// the node). Each says what it waits for while it fails.
func readinessChecks(s *startup, opts *options, docker taskControl) map[string]check {
	etcdAt := etcdAddress(opts)
	return map[string]check{
		"etcd": func(ctx context.Context) error {
			parts := s.etcd.Load()
			if parts == nil {
				return &checkError{what: fmt.Sprintf("etcd at %s is not connected yet", etcdAt)}
			}
			if err := pingEtcd(ctx, parts.client, parts.store.ControllersPrefix(), 2*time.Second); err != nil {
				return &checkError{what: fmt.Sprintf("etcd at %s does not answer", etcdAt), err: err}
			}
			return nil
		},
		"docker": func(ctx context.Context) error {
			if err := docker.Ping(ctx); err != nil {
				return &checkError{what: fmt.Sprintf("Docker at %s does not answer", dockerAddress(opts)), err: cmp.Or(errors.Unwrap(err), err)}
			}
			return nil
		},
		"controllers-listed": func(ctx context.Context) error {
			r := s.roles.Load()
			if r == nil && s.etcd.Load() == nil {
				return errors.New("the manager has not started: it waits for etcd")
			}
			if r == nil {
				return errors.New("the manager has not started: it waits for Docker to answer docker info")
			}
			if rm := r.Agent(); rm != nil && rm.Synced() {
				return nil
			}
			if r.StandsBy(ctx) {
				return nil // another manager acts for this node: ready to take over
			}
			// starting: campaigning, or acting for the node before its
			// manager has listed
			return errors.New("first list of controllers not done")
		},
	}
}

// startingOrigin is the origin of the page's data before the roles run.
var startingOrigin = origin{role: ctlview.RoleStarting, source: ctlview.SourceEtcd}

// errStarting is the page's answer before etcd is connected.
var errStarting = errors.New("the manager is starting: etcd is not connected yet")

// startingSource is the status page's source while the daemon starts and
// after: an error before etcd is connected, etcd alone (as a manager that
// is starting) before the roles run, then daemonSource.
type startingSource struct {
	state       *startup
	leaderElect bool
}

// current is the source to read now, or an error before etcd is up.
func (s startingSource) current() (viewSource, error) {
	parts := s.state.etcd.Load()
	if parts == nil {
		return nil, errStarting
	}
	r := s.state.roles.Load()
	if r == nil {
		return daemonSource{current: func() *agent.Agent { return nil }, store: parts.store}, nil
	}
	return daemonSource{current: r.Agent, store: parts.store, leaderElect: s.leaderElect}, nil
}

func (s startingSource) Origin() origin {
	src, err := s.current()
	if err != nil {
		return startingOrigin
	}
	return src.Origin()
}

func (s startingSource) Controllers(ctx context.Context) (origin, []registry.ControllerView, error) {
	src, err := s.current()
	if err != nil {
		return startingOrigin, nil, err
	}
	return src.Controllers(ctx)
}

func (s startingSource) Controller(ctx context.Context, id string) (origin, registry.ControllerView, bool, error) {
	src, err := s.current()
	if err != nil {
		return startingOrigin, registry.ControllerView{}, false, err
	}
	return src.Controller(ctx, id)
}

func (s startingSource) Events(ctx context.Context, id string) ([]api.Event, error) {
	src, err := s.current()
	if err != nil {
		return nil, err
	}
	return src.Events(ctx, id)
}
