package main

import (
	"crypto/x509"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/internal/certtest"
	"github.com/replication-manager/replication-manager/internal/etcdauth"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/registry"
)

// startTLSEtcd starts an embedded etcd that serves clients over https only
// and requires a client certificate signed by certs' authority.
func startTLSEtcd(t *testing.T, certs certtest.Files) *etcdtest.Server {
	t.Helper()
	return etcdtest.Start(t, func(cfg *embed.Config) {
		u := url.URL{Scheme: "https", Host: cfg.ListenClientUrls[0].Host}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{u}, []url.URL{u}
		cfg.ClientTLSInfo = transport.TLSInfo{
			CertFile:       certs.ServerCertFile,
			KeyFile:        certs.ServerKeyFile,
			TrustedCAFile:  certs.CAFile,
			ClientCertAuth: true,
		}
	})
}

func TestEtcdClientConnectsWithClientCertificate(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	srv := startTLSEtcd(t, certs)
	if !strings.HasPrefix(srv.ClientURL, "https://") {
		t.Fatalf("etcd serves clients at %s, want https", srv.ClientURL)
	}
	opts := newOptions()
	opts.EtcdServers = []string{srv.ClientURL}
	opts.EtcdCAFile, opts.EtcdCertFile, opts.EtcdKeyFile = certs.CAFile, certs.ClientCertFile, certs.ClientKeyFile
	if err := opts.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}

	client, err := newEtcdClient(t.Context(), opts, opts.EtcdServers, zap.NewNop())
	if err != nil {
		t.Fatalf("newEtcdClient: %v", err)
	}
	defer func() { _ = client.Close() }()
	if _, err := client.Put(t.Context(), "/registry/status/controllers/web", "written over TLS"); err != nil {
		t.Fatalf("put over TLS: %v", err)
	}
	resp, err := client.Get(t.Context(), "/registry/status/controllers/web")
	if err != nil {
		t.Fatalf("get over TLS: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "written over TLS" {
		t.Errorf("get over TLS = %v, want the value just written", resp.Kvs)
	}
}

func TestEtcdClientRefusedTLSHandshakeIsAClearError(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	other := certtest.New(t) // an authority etcd does not trust
	srv := startTLSEtcd(t, certs)
	host := strings.TrimPrefix(srv.ClientURL, "https://")
	// the system roots load once per process, at their first use: on a
	// loaded machine (the race detector, the end-to-end tests beside) that
	// took the last case's handshake past its dial timeout
	_, _ = x509.SystemCertPool()

	for _, tt := range []struct {
		name                      string
		caFile, certFile, keyFile string
		want                      string // the cause, after the common message
	}{
		{"no client certificate", certs.CAFile, "", "", "certificate required"},
		{"client certificate of another authority", certs.CAFile, other.ClientCertFile, other.ClientKeyFile, "remote error: tls:"},
		{"server not signed by the given CA", other.CAFile, certs.ClientCertFile, certs.ClientKeyFile, "x509: certificate signed by unknown authority"},
		{"no TLS flags: system roots", "", "", "", "x509: certificate signed by unknown authority"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := newOptions()
			opts.EtcdServers = []string{srv.ClientURL}
			opts.EtcdCAFile, opts.EtcdCertFile, opts.EtcdKeyFile = tt.caFile, tt.certFile, tt.keyFile
			opts.EtcdDialTimeout = 2 * time.Second

			start := time.Now()
			client, err := newEtcdClient(t.Context(), opts, opts.EtcdServers, zap.NewNop())
			if err == nil {
				_ = client.Close()
				t.Fatal("newEtcdClient succeeded, want a TLS handshake error")
			}
			msg := err.Error()
			prefix := "etcd at " + host + ": TLS handshake failed (see --etcd-cafile, --etcd-certfile, --etcd-keyfile): "
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want %q followed by %q", msg, prefix, tt.want)
			}
			if took := time.Since(start); took > opts.EtcdDialTimeout {
				t.Errorf("took %s, want the error before the dial timeout (%s)", took, opts.EtcdDialTimeout)
			}
		})
	}
}

func TestEtcdClientDoesNotWaitForAnEndpointThatIsDown(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	srv := startTLSEtcd(t, certs)
	endpoint := srv.ClientURL
	srv.Close() // nothing listens there now: etcd may come later

	opts := newOptions()
	opts.EtcdServers = []string{endpoint}
	opts.EtcdCAFile, opts.EtcdCertFile, opts.EtcdKeyFile = certs.CAFile, certs.ClientCertFile, certs.ClientKeyFile
	client, err := newEtcdClient(t.Context(), opts, opts.EtcdServers, zap.NewNop())
	if err != nil {
		t.Fatalf("newEtcdClient with etcd down: %v, want a client that waits for it", err)
	}
	if err := client.Close(); err != nil {
		t.Error(err)
	}
}

// With client certificate auth, etcd takes the certificate's common name as
// the user: the manager needs no password, and gets only its role.
func TestEtcdClientCertificateCommonNameIsTheUserOfTheRole(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	srv := startTLSEtcd(t, certs)
	opts := newOptions()
	opts.EtcdServers = []string{srv.ClientURL}
	opts.EtcdCAFile, opts.EtcdCertFile, opts.EtcdKeyFile = certs.CAFile, certs.ClientCertFile, certs.ClientKeyFile
	client, err := newEtcdClient(t.Context(), opts, opts.EtcdServers, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	ctx := t.Context()
	// set up while auth is off, then turn it on
	if err := etcdauth.GrantManagerRole(ctx, client, registry.DefaultPrefix, certtest.ClientCommonName, ""); err != nil {
		t.Fatalf("GrantManagerRole: %v", err)
	}
	for _, step := range []func() error{
		func() error { _, err := client.RoleAdd(ctx, "root"); return err },
		func() error { _, err := client.UserAdd(ctx, "root", "root-password"); return err },
		func() error { _, err := client.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := client.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enable etcd auth: %v", err)
		}
	}

	if _, err := client.Put(ctx, "/registry/status/controllers/web", "{}"); err != nil {
		t.Errorf("write a status as %s: %v", certtest.ClientCommonName, err)
	}
	if _, err := client.Get(ctx, "/registry/controllers/", clientv3.WithPrefix()); err != nil {
		t.Errorf("list the specs as %s: %v", certtest.ClientCommonName, err)
	}
	if _, err := client.Put(ctx, "/registry/controllers/web", "{}"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("write a spec as %s: %v, want %v", certtest.ClientCommonName, err, rpctypes.ErrPermissionDenied)
	}
}
