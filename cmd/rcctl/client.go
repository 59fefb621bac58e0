package main

// The global flags and the two connections they describe: etcd, where specs
// and status live, and Docker, which describe asks for containers. Every etcd
// call runs under the dial timeout, because the etcd client does not fail on
// an endpoint that does not answer: it waits. A call that runs out of time
// becomes one clear error naming the endpoints; endpoints that refuse the
// connection fail at once, before the client waits (refused.go).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdctlenv"
	"github.com/replication-manager/replication-manager/internal/etcdtls"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// globalOptions are the flags every command accepts. The etcd endpoint, TLS
// and auth flags take their defaults from etcdctl's environment variables
// (internal/etcdctlenv), read once the command line is parsed.
type globalOptions struct {
	etcdServers  []string
	prefix       string
	dialTimeout  time.Duration
	dockerHost   string
	maxReplicas  int
	etcdCAFile   string
	etcdCertFile string
	etcdKeyFile  string
	etcdUser     string
	etcdPassword string
}

func (o *globalOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.etcdServers, "etcd-servers", []string{"127.0.0.1:2379"}, "etcd endpoints, comma-separated, with or without http:// or https:// (default $ETCDCTL_ENDPOINTS when set)")
	fs.StringVar(&o.prefix, "registry-prefix", registry.DefaultPrefix, "etcd key prefix of the registry")
	fs.DurationVar(&o.dialTimeout, "etcd-dial-timeout", 5*time.Second, "how long to wait for etcd (and Docker) to answer each request")
	fs.StringVar(&o.dockerHost, "docker-host", "", "Docker daemon address (default: as the docker CLI finds it, DOCKER_HOST or the local socket)")
	fs.IntVar(&o.maxReplicas, "max-replicas", api.DefaultMaxReplicas, "largest replicas a spec may ask for (validation)")
	fs.StringVar(&o.etcdCAFile, "etcd-cafile", "", "CA bundle to verify the etcd servers' certificates (default $ETCDCTL_CACERT)")
	fs.StringVar(&o.etcdCertFile, "etcd-certfile", "", "client certificate for etcd (default $ETCDCTL_CERT)")
	fs.StringVar(&o.etcdKeyFile, "etcd-keyfile", "", "client key for etcd (default $ETCDCTL_KEY)")
	fs.StringVar(&o.etcdUser, "etcd-user", "", "etcd user name (etcd auth; default $ETCDCTL_USER, which may be user:password as etcdctl's --user)")
	fs.StringVar(&o.etcdPassword, "etcd-password", "", "etcd password (etcd auth; default $ETCDCTL_PASSWORD, which other users cannot read in the process list)")
}

// readEnv gives the etcd flags the command line left unset their values
// from etcdctl's environment variables.
func (c *cli) readEnv() error {
	if c.globalFlags == nil {
		return nil // no command line parsed: the options are as set
	}
	return etcdctlenv.Apply(c.globalFlags, c.getenv, false)
}

// validate rejects flag combinations that cannot work, before anything
// connects.
func (o *globalOptions) validate() error {
	if o.dialTimeout <= 0 {
		return fmt.Errorf("--etcd-dial-timeout must be positive, got %s", o.dialTimeout)
	}
	if o.maxReplicas < 0 {
		return fmt.Errorf("--max-replicas must not be negative, got %d", o.maxReplicas)
	}
	if (o.etcdCertFile == "") != (o.etcdKeyFile == "") {
		return errors.New("--etcd-certfile and --etcd-keyfile go together")
	}
	if o.etcdUser != "" && o.etcdPassword == "" {
		return errors.New("--etcd-user needs --etcd-password")
	}
	if _, err := o.endpoints(); err != nil {
		return err
	}
	// the endpoints as written: endpoints() makes a host:port http:// or
	// https:// by the rule CheckPlain applies
	return etcdtls.CheckPlain(o.etcdServers, o.etcdFlags())
}

// etcdFlags are the etcd TLS and auth flags.
func (o *globalOptions) etcdFlags() etcdtls.Flags {
	return etcdtls.Flags{CAFile: o.etcdCAFile, CertFile: o.etcdCertFile, KeyFile: o.etcdKeyFile, User: o.etcdUser, Password: o.etcdPassword}
}

func (o *globalOptions) tls() bool {
	return o.etcdFlags().TLSFiles()
}

// endpoints are the etcd servers as the client wants them: a bare
// host:port gets http:// (https:// when TLS flags are set).
func (o *globalOptions) endpoints() ([]string, error) {
	scheme := "http://"
	if o.tls() {
		scheme = "https://"
	}
	var out []string
	for _, s := range o.etcdServers {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if i := strings.Index(s, "://"); i >= 0 {
			switch s[:i] {
			case "http", "https", "unix", "unixs":
			default:
				return nil, fmt.Errorf("--etcd-servers: %q: scheme must be http, https, unix or unixs", s)
			}
		} else {
			s = scheme + s
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("--etcd-servers: no endpoint given")
	}
	return out, nil
}

// conn is one command's connection to etcd.
type conn struct {
	client    *clientv3.Client
	store     *registry.Store
	servers   string // as the user wrote them, for messages
	endpoints []string
	tls       *tls.Config
	user      string
	timeout   time.Duration
}

// connect opens the etcd client. It does not wait for etcd: the first call
// does, under the timeout. Only endpoints that all refuse the connection
// fail here, at once (refused.go).
func (c *cli) connect(ctx context.Context) (*conn, error) {
	endpoints, err := c.opts.endpoints()
	if err != nil {
		return nil, err
	}
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: c.opts.dialTimeout,
		Context:     ctx,
		// The client logs its retries; rcctl reports one error instead.
		Logger:   zap.NewNop(),
		Username: c.opts.etcdUser,
		Password: c.opts.etcdPassword,
	}
	if c.opts.tls() {
		info := transport.TLSInfo{
			CertFile:      c.opts.etcdCertFile,
			KeyFile:       c.opts.etcdKeyFile,
			TrustedCAFile: c.opts.etcdCAFile,
		}
		tlsCfg, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS: %w", err)
		}
		cfg.TLS = tlsCfg
	}
	cn := &conn{
		servers:   strings.Join(c.opts.etcdServers, ","),
		endpoints: endpoints,
		tls:       cfg.TLS,
		user:      c.opts.etcdUser,
		timeout:   c.opts.dialTimeout,
	}
	if allRefuse(ctx, endpoints, c.opts.dialTimeout) {
		return nil, cn.refused()
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		// With auth, New authenticates and so waits for etcd.
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, cn.unreachable(ctx)
		}
		return nil, cn.explain(fmt.Errorf("etcd at %s: %w", cn.servers, err))
	}
	cn.client = client
	cn.store = registry.NewStore(client, c.opts.prefix)
	return cn, nil
}

func (cn *conn) close() { _ = cn.client.Close() }

// unreachable is the error for an etcd that did not answer in time. The
// client reports a failed TLS handshake only as a timeout too, so https
// endpoints are probed once to tell the two apart.
func (cn *conn) unreachable(ctx context.Context) error {
	if err := cn.tlsProblem(ctx); err != nil {
		return err
	}
	return fmt.Errorf("etcd at %s did not answer within %s (is the replication manager running? see --etcd-servers)", cn.servers, cn.timeout)
}

// tlsProblem returns the TLS handshake error of the first https endpoint
// that accepts a connection but refuses the handshake, or nil.
func (cn *conn) tlsProblem(ctx context.Context) error {
	cfg := cn.tls
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12} // https:// without TLS flags: the system's roots
	}
	return etcdtls.Check(ctx, cn.endpoints, cfg, cn.timeout)
}

// explain adds to an error etcd reported in its own words what the user
// can do about it.
func (cn *conn) explain(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrUserEmpty):
		return fmt.Errorf("%w (etcd at %s requires authentication: see --etcd-user and --etcd-password)", err, cn.servers)
	case errors.Is(err, rpctypes.ErrAuthFailed):
		return fmt.Errorf("%w (see --etcd-user and --etcd-password)", err)
	case errors.Is(err, rpctypes.ErrPermissionDenied):
		return fmt.Errorf("%w (etcd user %q lacks a permission it needs)", err, cn.user)
	}
	return err
}

// call runs one etcd request under the timeout and turns a request that ran
// out of time into the unreachable error. An interrupt (ctx cancelled by a
// signal) is returned as it is.
func call[T any](ctx context.Context, cn *conn, op func(ctx context.Context) (T, error)) (T, error) {
	opCtx, cancel := context.WithTimeout(ctx, cn.timeout)
	defer cancel()
	v, err := op(opCtx)
	if err != nil && ctx.Err() == nil && (opCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
		return v, cn.unreachable(ctx)
	}
	return v, cn.explain(err)
}

func (cn *conn) getController(ctx context.Context, id string) (registry.Spec, error) {
	return call(ctx, cn, func(ctx context.Context) (registry.Spec, error) {
		return cn.store.GetController(ctx, id)
	})
}

func (cn *conn) listControllers(ctx context.Context) ([]registry.Spec, error) {
	return call(ctx, cn, func(ctx context.Context) ([]registry.Spec, error) {
		specs, _, err := cn.store.ListControllers(ctx)
		return specs, err
	})
}

// getStatus returns the status of id, or nil when the manager has not
// written one.
func (cn *conn) getStatus(ctx context.Context, id string) (*api.ReplicationControllerStatus, error) {
	st, err := call(ctx, cn, func(ctx context.Context) (*api.ReplicationControllerStatus, error) {
		return cn.store.GetStatus(ctx, id)
	})
	if errors.Is(err, registry.ErrNotFound) {
		return nil, nil
	}
	return st, err
}

func (cn *conn) listStatuses(ctx context.Context) (map[string]*api.ReplicationControllerStatus, error) {
	return call(ctx, cn, cn.store.ListStatuses)
}

func (cn *conn) createController(ctx context.Context, rc *api.ReplicationController) (int64, error) {
	return call(ctx, cn, func(ctx context.Context) (int64, error) {
		return cn.store.CreateController(ctx, rc)
	})
}

func (cn *conn) updateController(ctx context.Context, rc *api.ReplicationController, modRevision int64) (int64, error) {
	return call(ctx, cn, func(ctx context.Context) (int64, error) {
		return cn.store.UpdateController(ctx, rc, modRevision)
	})
}

func (cn *conn) deleteController(ctx context.Context, id string) error {
	_, err := call(ctx, cn, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, cn.store.DeleteController(ctx, id)
	})
	return err
}

func (cn *conn) listNodes(ctx context.Context) ([]api.Node, error) {
	return call(ctx, cn, cn.store.ListNodes)
}

func (cn *conn) listAssignments(ctx context.Context) (map[string]map[int]api.Assignment, error) {
	return call(ctx, cn, cn.store.ListAssignments)
}

// listReports returns the nodes' reports on controller id ("" for every
// controller).
func (cn *conn) listReports(ctx context.Context, id string) ([]api.NodeReport, error) {
	return call(ctx, cn, func(ctx context.Context) ([]api.NodeReport, error) {
		return cn.store.ListReports(ctx, id)
	})
}

// leaseTTL asks etcd how long lease has left, in whole seconds; -1 when
// the lease is gone.
func leaseTTL(ctx context.Context, cn *conn, lease clientv3.LeaseID) (int64, error) {
	return call(ctx, cn, func(ctx context.Context) (int64, error) {
		resp, err := cn.client.TimeToLive(ctx, lease)
		if err != nil {
			return 0, err
		}
		return resp.TTL, nil
	})
}

// taskLister is what describe needs from Docker: the containers carrying
// some labels. It is an interface so that tests can give a fake.
type taskLister interface {
	ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error)
}

// dialDocker opens the Docker client; host "" finds Docker as the docker
// CLI does.
func dialDocker(host string) (taskLister, func(), error) {
	d, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{Host: host})
	if err != nil {
		return nil, nil, err
	}
	return d, func() { _ = d.Close() }, nil
}

func (cn *conn) listNodeConfigs(ctx context.Context) (map[string]api.NodeConfig, error) {
	return call(ctx, cn, cn.store.ListNodeConfigs)
}

func (cn *conn) updateNodeConfig(ctx context.Context, node string, change func(*api.NodeConfig) error) (api.NodeConfig, error) {
	return call(ctx, cn, func(ctx context.Context) (api.NodeConfig, error) {
		return cn.store.UpdateNodeConfig(ctx, node, change)
	})
}
