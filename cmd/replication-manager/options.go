package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtls"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// options are the daemon's flags (docs/CONTRACT.md, Programs). The etcd
// endpoint, TLS and auth flags take their defaults from etcdctl's
// environment variables (internal/etcdctlenv), read once the command line
// is parsed.
type options struct {
	EtcdServers          []string
	EtcdDataDir          string
	EtcdListenClientURLs string
	EtcdListenPeerURLs   string
	EtcdCAFile           string
	EtcdCertFile         string
	EtcdKeyFile          string
	EtcdUser             string
	EtcdPassword         string
	EtcdDialTimeout      time.Duration
	RegistryPrefix       string
	DockerHost           string
	// DockerConfig is the Docker client configuration directory whose
	// credentials the node pulls with; empty: $DOCKER_CONFIG, else ~/.docker.
	DockerConfig             string
	DockerAllowInsecureTCP   bool
	DockerStopTimeout        time.Duration
	SyncPeriod               time.Duration
	RelistPeriod             time.Duration
	Workers                  int
	BurstReplicas            int
	RevisionHistoryLimit     int
	MaxReplicas              int
	ShutdownGracePeriod      time.Duration
	MetricsBindAddress       string
	HTTPAllowedHosts         []string
	LeaderElect              bool
	LeaderElectIdentity      string
	LeaderElectLeaseDuration time.Duration
	AllowPrivileged          bool
	AllowHostNetwork         bool
	AllowHostPID             bool
	AllowHostIPC             bool
	AllowHostMounts          bool
	AllowDevices             bool
	AllowCapAdd              bool
	AllowCapAddAll           bool
	AllowHostPorts           bool
	NodeName                 string
	NodeLabels               string
	NodeReserve              string
	NodeGrace                time.Duration
	StopWhenIsolated         bool
	LogLevel                 string
	LogFormat                string
}

func newOptions() *options {
	return &options{
		EtcdDataDir:              "replication-manager.etcd",
		EtcdListenClientURLs:     "http://127.0.0.1:2379",
		EtcdListenPeerURLs:       "http://127.0.0.1:2380",
		EtcdDialTimeout:          5 * time.Second,
		RegistryPrefix:           registry.DefaultPrefix,
		DockerStopTimeout:        10 * time.Second,
		SyncPeriod:               registry.DefaultSyncPeriod,
		RelistPeriod:             agent.DefaultRelistPeriod,
		Workers:                  agent.DefaultWorkers,
		BurstReplicas:            agent.DefaultBurstReplicas,
		RevisionHistoryLimit:     registry.DefaultRevisionHistoryLimit,
		MaxReplicas:              api.DefaultMaxReplicas,
		ShutdownGracePeriod:      agent.DefaultDrainTimeout,
		MetricsBindAddress:       "127.0.0.1:10252",
		LeaderElect:              true,
		LeaderElectIdentity:      roles.DefaultIdentity(),
		LeaderElectLeaseDuration: roles.DefaultLeaseDuration,
		NodeGrace:                leader.DefaultNodeGrace,
		LogLevel:                 "info",
		LogFormat:                "text",
	}
}

// AddFlags registers every option on fs.
func (o *options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "etcd endpoints of an existing cluster (comma-separated; default $ETCDCTL_ENDPOINTS); empty starts an embedded etcd")
	fs.StringVar(&o.EtcdDataDir, "etcd-data-dir", o.EtcdDataDir, "data directory of the embedded etcd")
	fs.StringVar(&o.EtcdListenClientURLs, "etcd-listen-client-urls", o.EtcdListenClientURLs, "client URLs the embedded etcd listens on (comma-separated)")
	fs.StringVar(&o.EtcdListenPeerURLs, "etcd-listen-peer-urls", o.EtcdListenPeerURLs, "peer URLs the embedded etcd listens on (comma-separated)")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle to verify the etcd servers (with --etcd-servers; default $ETCDCTL_CACERT)")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "client certificate for etcd (with --etcd-servers; default $ETCDCTL_CERT)")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "client key for etcd (with --etcd-servers; default $ETCDCTL_KEY)")
	fs.StringVar(&o.EtcdUser, "etcd-user", o.EtcdUser, "etcd user name (with --etcd-servers; default $ETCDCTL_USER, which may be user:password as etcdctl's --user)")
	fs.StringVar(&o.EtcdPassword, "etcd-password", o.EtcdPassword, "etcd password (with --etcd-servers; prefer the ETCD_PASSWORD environment variable, else ETCDCTL_PASSWORD, which other users cannot read in the process list)")
	fs.DurationVar(&o.EtcdDialTimeout, "etcd-dial-timeout", o.EtcdDialTimeout, "how long one etcd connection attempt may take")
	fs.StringVar(&o.RegistryPrefix, "registry-prefix", o.RegistryPrefix, "etcd key prefix that roots every key")
	fs.StringVar(&o.DockerHost, "docker-host", o.DockerHost, "Docker Engine address; empty finds it as the docker CLI does (DOCKER_HOST, or the local socket)")
	fs.BoolVar(&o.DockerAllowInsecureTCP, "docker-allow-insecure-tcp", o.DockerAllowInsecureTCP, "allow a tcp:// Docker host without verified TLS (DOCKER_CERT_PATH and DOCKER_TLS_VERIFY); whoever can reach that port controls the host")
	fs.StringVar(&o.DockerConfig, "docker-config", o.DockerConfig, "Docker client configuration directory whose auths and credential helpers authenticate image pulls, as docker pull's --config (default $DOCKER_CONFIG, else ~/.docker); credentials never go into etcd")
	fs.DurationVar(&o.DockerStopTimeout, "docker-stop-timeout", o.DockerStopTimeout, "how long a container whose spec sets no stopGracePeriodSeconds gets to stop before it is killed")
	fs.DurationVar(&o.SyncPeriod, "sync-period", o.SyncPeriod, "how often every controller is synced even without an event, from the caches")
	fs.DurationVar(&o.RelistPeriod, "relist-period", o.RelistPeriod, "how often the periodic sync also lists the containers again, to catch events Docker dropped (0: every --sync-period)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "how many controllers sync in parallel on this node; the leader has four times as many in hand at once (at least 512), its work being mostly waits on etcd")
	fs.IntVar(&o.BurstReplicas, "burst-replicas", o.BurstReplicas, "most containers created or deleted by one sync of one controller")
	fs.IntVar(&o.RevisionHistoryLimit, "revision-history-limit", o.RevisionHistoryLimit, "templates kept per controller under <prefix>/history/controllers/<id>/, for rcctl rollout history and undo")
	fs.IntVar(&o.MaxReplicas, "max-replicas", o.MaxReplicas, "highest replica count a spec may ask for")
	fs.DurationVar(&o.ShutdownGracePeriod, "shutdown-grace-period", o.ShutdownGracePeriod, "how long syncs in progress may go on after SIGTERM")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics, /healthz and /readyz; empty or 0 turns them off")
	fs.StringSliceVar(&o.HTTPAllowedHosts, "http-allowed-hosts", o.HTTPAllowedHosts, "host names, besides the listen address's, localhost and the loopback addresses (and the machine's name on 0.0.0.0 or ::, and IP addresses), that requests to --metrics-bind-address may name in their Host header (comma-separated); any other gets 421, against DNS rebinding")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "take part in leader election, so that several managers can share one etcd and exactly one acts")
	fs.StringVar(&o.LeaderElectIdentity, "leader-elect-identity", o.LeaderElectIdentity, "this instance's name in the election")
	fs.DurationVar(&o.LeaderElectLeaseDuration, "leader-elect-lease-duration", o.LeaderElectLeaseDuration, "etcd session TTL: how long a standby waits after the leader dies before it takes over")
	fs.BoolVar(&o.AllowPrivileged, "allow-privileged", o.AllowPrivileged, "allow templates with privileged: true")
	fs.BoolVar(&o.AllowHostNetwork, "allow-host-network", o.AllowHostNetwork, "allow templates with hostNetwork: true")
	fs.BoolVar(&o.AllowHostPID, "allow-host-pid", o.AllowHostPID, "allow templates with hostPID: true")
	fs.BoolVar(&o.AllowHostIPC, "allow-host-ipc", o.AllowHostIPC, "allow templates with hostIPC: true")
	fs.BoolVar(&o.AllowHostMounts, "allow-host-mounts", o.AllowHostMounts, "allow templates with host bind mounts (volumes)")
	fs.BoolVar(&o.AllowDevices, "allow-devices", o.AllowDevices, "allow templates with host devices")
	fs.BoolVar(&o.AllowCapAdd, "allow-cap-add", o.AllowCapAdd, "allow templates that add Linux capabilities (capAdd)")
	fs.BoolVar(&o.AllowCapAddAll, "allow-cap-add-all", o.AllowCapAddAll, "also allow capAdd: [\"ALL\"], every capability (with --allow-cap-add)")
	fs.BoolVar(&o.AllowHostPorts, "allow-host-ports", o.AllowHostPorts, "allow templates that publish ports on the host (hostPort, hostIP)")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "this Docker engine's name as a node; empty takes the engine's own (docker info's Name)")
	fs.StringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "this node's labels, k=v,k2=v2, which controllers' nodeSelector match")
	fs.StringVar(&o.NodeReserve, "node-reserve", o.NodeReserve, "what this node's host keeps for itself, memory=QUANTITY,cpu=QUANTITY (memory=512Mi,cpu=500m; as the kubelet's --system-reserved): placement hands out the rest of the engine's memory and CPUs")
	fs.DurationVar(&o.NodeGrace, "node-grace", o.NodeGrace, "how long a node may be gone before the leader moves its slots to nodes that are alive")
	fs.BoolVar(&o.StopWhenIsolated, "stop-when-isolated", o.StopWhenIsolated, "remove this node's containers once its etcd lease cannot be renewed, before it can expire, so that a slot never runs on two nodes even under a partition")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "log format: text or json")
}

// Validate checks the options and names the flag at fault.
func (o *options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.SyncPeriod <= 0 {
		bad("--sync-period: must be positive, got %s", o.SyncPeriod)
	}
	if o.RelistPeriod < 0 {
		bad("--relist-period: must not be negative, got %s", o.RelistPeriod)
	}
	if o.Workers < 1 {
		bad("--workers: must be at least 1, got %d", o.Workers)
	}
	if o.RevisionHistoryLimit < 1 {
		bad("--revision-history-limit: must be at least 1, got %d", o.RevisionHistoryLimit)
	}
	if o.BurstReplicas < 1 {
		bad("--burst-replicas: must be at least 1, got %d", o.BurstReplicas)
	}
	switch {
	case o.MaxReplicas < 1:
		bad("--max-replicas: must be at least 1, got %d", o.MaxReplicas)
	case o.MaxReplicas > api.MaxMaxReplicas:
		bad("--max-replicas: must be at most %d, got %d", api.MaxMaxReplicas, o.MaxReplicas)
	}
	if o.EtcdDialTimeout <= 0 {
		bad("--etcd-dial-timeout: must be positive, got %s", o.EtcdDialTimeout)
	}
	if o.ShutdownGracePeriod < 0 {
		bad("--shutdown-grace-period: must not be negative, got %s", o.ShutdownGracePeriod)
	}
	if o.LeaderElectLeaseDuration < 2*time.Second {
		bad("--leader-elect-lease-duration: must be at least 2s, got %s", o.LeaderElectLeaseDuration)
	}
	if o.NodeName != "" {
		if err := api.ValidateNodeName(o.NodeName); err != nil {
			bad("--node-name: %v", err)
		}
	}
	if _, err := api.ParseNodeLabels(o.NodeLabels); err != nil {
		bad("--node-labels: %v", err)
	}
	if _, err := api.ParseNodeReserve(o.NodeReserve); err != nil {
		bad("--node-reserve: %v", err)
	}
	if o.NodeGrace <= 0 {
		bad("--node-grace: must be positive, got %s", o.NodeGrace)
	}
	if !strings.HasPrefix(o.RegistryPrefix, "/") {
		bad("--registry-prefix: must start with /, got %q", o.RegistryPrefix)
	}
	if o.MetricsBindAddress != "" && o.MetricsBindAddress != "0" {
		if _, _, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
			bad("--metrics-bind-address: %v", err)
		}
	}
	for _, h := range o.HTTPAllowedHosts {
		h = strings.TrimSpace(h)
		if _, _, err := net.SplitHostPort(h); err == nil || h == "" || strings.ContainsAny(h, "/ ") {
			bad("--http-allowed-hosts: %q is not a host name (no port, scheme or path)", h)
		}
	}
	switch o.LogFormat {
	case "text", "json":
	default:
		bad("--log-format: must be text or json, got %q", o.LogFormat)
	}
	if _, err := parseLevel(o.LogLevel); err != nil {
		bad("--log-level: %v", err)
	}
	if len(o.EtcdServers) == 0 && (o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "" || o.EtcdUser != "") {
		bad("--etcd-cafile, --etcd-certfile, --etcd-keyfile and --etcd-user need --etcd-servers")
	}
	if err := etcdtls.CheckPlain(o.EtcdServers, o.etcdFlags()); err != nil {
		errs = append(errs, err)
	}
	if o.AllowCapAddAll && !o.AllowCapAdd {
		bad("--allow-cap-add-all: needs --allow-cap-add, which allows capAdd at all")
	}
	if risk := dockerTransportRisk(o.dockerHost()); risk != "" && !o.DockerAllowInsecureTCP {
		source := "DOCKER_HOST"
		if o.DockerHost != "" {
			source = "--docker-host"
		}
		bad("%s %s: %s; the Docker API is root on that host, so configure TLS (DOCKER_CERT_PATH with ca.pem, cert.pem, key.pem, and DOCKER_TLS_VERIFY=1) or pass --docker-allow-insecure-tcp to accept the risk",
			source, o.dockerHost(), risk)
	}
	return errors.Join(errs...)
}

// etcdFlags are the etcd TLS and auth options, with the password's source:
// the client reads ETCD_PASSWORD when --etcd-password is not given.
func (o *options) etcdFlags() etcdtls.Flags {
	f := etcdtls.Flags{CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile, User: o.EtcdUser, Password: o.EtcdPassword}
	if f.Password == "" {
		f.Password = os.Getenv("ETCD_PASSWORD")
		f.PasswordFromEnv = f.Password != ""
	}
	return f
}

// dockerHost is the Docker address the client will use: --docker-host,
// else DOCKER_HOST; empty means the local socket.
func (o *options) dockerHost() string {
	if o.DockerHost != "" {
		return o.DockerHost
	}
	return os.Getenv("DOCKER_HOST")
}

// dockerTransportRisk says why reaching Docker at host is unsafe, or ""
// when it is not: a local socket, or TCP with TLS that verifies the
// server. It reads the environment as the Docker client does: TLS is on
// when DOCKER_CERT_PATH is set, and verifies the server only when
// DOCKER_TLS_VERIFY is also set.
func dockerTransportRisk(host string) string {
	if !strings.HasPrefix(strings.ToLower(host), "tcp://") {
		return ""
	}
	if os.Getenv("DOCKER_CERT_PATH") == "" {
		return "plain TCP without TLS (DOCKER_CERT_PATH is not set)"
	}
	if os.Getenv("DOCKER_TLS_VERIFY") == "" {
		return "TLS that does not verify the server (DOCKER_TLS_VERIFY is not set)"
	}
	return ""
}

// policy is the security policy the --allow-* flags make.
func (o *options) policy() api.SecurityPolicy {
	return api.SecurityPolicy{
		AllowPrivileged:  o.AllowPrivileged,
		AllowHostNetwork: o.AllowHostNetwork,
		AllowHostPID:     o.AllowHostPID,
		AllowHostIPC:     o.AllowHostIPC,
		AllowHostMounts:  o.AllowHostMounts,
		AllowDevices:     o.AllowDevices,
		AllowCapAdd:      o.AllowCapAdd,
		AllowCapAddAll:   o.AllowCapAddAll,
		AllowHostPorts:   o.AllowHostPorts,
	}
}
