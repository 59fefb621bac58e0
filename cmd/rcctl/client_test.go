package main

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/internal/certtest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

// silentAddr is the address of a listener that accepts TCP connections
// (the kernel completes them) but never answers: an etcd that hangs.
func silentAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}

func TestUnreachableEtcdGivesClearTimeoutMessageQuickly(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"get", []string{"get"}},
		{"delete", []string{"delete", "web"}},
		// auth needs TLS, which a host:port with a CA gets
		{"with auth", []string{"--etcd-cafile", certs.CAFile, "--etcd-user", "root", "--etcd-password", "pw", "get", "web"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := silentAddr(t)
			start := time.Now()
			var r result
			r.err = run(t.Context(), append([]string{"--etcd-servers", addr, "--etcd-dial-timeout", "1s"}, tt.args...), strings.NewReader(""), io.Discard, io.Discard)

			want := "etcd at " + addr + " did not answer within 1s (is the replication manager running? see --etcd-servers)"
			if r.err == nil || r.err.Error() != want {
				t.Fatalf("error %v, want %q", r.err, want)
			}
			if elapsed := time.Since(start); elapsed > 4*time.Second {
				t.Errorf("took %s, want about the 1s timeout", elapsed)
			}
		})
	}
}

func TestRefusedConnectionFailsAtOnce(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"get", []string{"get"}},
		{"run", []string{"run", "web", "--image", "demo-task:latest"}},
		{"with auth", []string{"--etcd-cafile", certs.CAFile, "--etcd-user", "root", "--etcd-password", "pw", "get", "web"}},
		{"rollout status", []string{"rollout", "status", "web"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := etcdtest.FreeAddr(t), etcdtest.FreeAddr(t) // nothing listens on either
			start := time.Now()
			// the default 5s dial timeout: a refusal must not wait for it
			err := run(t.Context(), append([]string{"--etcd-servers", a + "," + b}, tt.args...), strings.NewReader(""), io.Discard, io.Discard)

			want := "etcd at " + a + "," + b + " refused the connection (is the replication manager running? see --etcd-servers)"
			if err == nil || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("took %s, want well under the 5s dial timeout", elapsed)
			}
		})
	}
}

func TestOneEndpointThatAnswersIsEnoughAmongRefusingOnes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	var stdout, stderr bytes.Buffer

	err := run(t.Context(), []string{"--etcd-servers", etcdtest.FreeAddr(t) + "," + e.etcd.ClientURL, "get", "web", "-o", "json"}, strings.NewReader(""), &stdout, &stderr)

	assertStdout(t, result{stdout.String(), stderr.String(), err}, encode(t, newController("web", 3)))
}

func TestGlobalFlagsWorkBeforeAndAfterTheCommand(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"get", "web", "-o", "json", "--etcd-servers", strings.TrimPrefix(e.etcd.ClientURL, "http://"), "--registry-prefix", "/registry/"}, nil, &stdout, &stderr)

	assertStdout(t, result{stdout.String(), stderr.String(), err}, encode(t, newController("web", 3)))
}

func TestRegistryPrefixRootsEveryKey(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	assertOK(t, e.run("", "--registry-prefix", "/other", "run", "web", "--image", "demo-task:latest"))

	assertNotFound(t, e, "web")
	r := e.run("", "--registry-prefix", "/other", "get", "web")
	assertOK(t, r)
}

func TestEndpointsAcceptHostPortOrURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts globalOptions
		want []string
	}{
		{globalOptions{etcdServers: []string{"127.0.0.1:2379"}}, []string{"http://127.0.0.1:2379"}},
		{globalOptions{etcdServers: []string{"http://a:2379", " b:2379 ", ""}}, []string{"http://a:2379", "http://b:2379"}},
		{globalOptions{etcdServers: []string{"a:2379", "https://b:2379"}, etcdCAFile: "ca.pem"}, []string{"https://a:2379", "https://b:2379"}},
	} {
		got, err := tt.opts.endpoints()
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("endpoints(%q) = %q, %v; want %q", tt.opts.etcdServers, got, err, tt.want)
		}
	}
}

func TestTLSAndAuthFlagsNeedHTTPS(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		opts    globalOptions
		wantErr string // "" means valid
	}{
		{"https with a password", globalOptions{etcdServers: []string{"https://a:2379"}, etcdUser: "root", etcdPassword: "s3cret-pw-71"}, ""},
		{"a host:port with a CA, which becomes https", globalOptions{etcdServers: []string{"a:2379"}, etcdCAFile: "ca.pem", etcdUser: "root", etcdPassword: "s3cret-pw-71"}, ""},
		{"a unix socket with a password", globalOptions{etcdServers: []string{"unix:///run/etcd.sock"}, etcdUser: "root", etcdPassword: "s3cret-pw-71"}, ""},
		{"http without TLS or auth", globalOptions{etcdServers: []string{"http://a:2379"}}, ""},
		{"the default endpoint with a password", globalOptions{etcdServers: []string{"127.0.0.1:2379"}, etcdUser: "root", etcdPassword: "s3cret-pw-71"},
			"--etcd-servers 127.0.0.1:2379: must be https:// with --etcd-user, --etcd-password"},
		{"http with a CA", globalOptions{etcdServers: []string{"http://a:2379"}, etcdCAFile: "ca.pem"},
			"--etcd-servers http://a:2379: must be https:// with --etcd-cafile"},
		{"http among https with a client certificate", globalOptions{etcdServers: []string{"https://a:2379", "http://b:2379"}, etcdCertFile: "c.pem", etcdKeyFile: "k.pem"},
			"--etcd-servers http://b:2379: must be https:// with --etcd-certfile, --etcd-keyfile"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.dialTimeout = time.Second
			err := tt.opts.validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("validate() = %v, want an error with %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret-pw-71") {
				t.Errorf("validate() = %v: it shows the password", err)
			}
		})
	}
}

func TestEtcdAuthFlagsAuthenticate(t *testing.T) {
	t.Parallel()
	// The setup goes over plain http; rcctl, whose auth flags need TLS,
	// over https with the server's CA.
	certs := certtest.New(t)
	tlsURL := url.URL{Scheme: "https", Host: etcdtest.FreeAddr(t)}
	srv := startEtcd(t, func(cfg *embed.Config) {
		cfg.ListenClientUrls = append(cfg.ListenClientUrls, tlsURL)
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: certs.ServerCertFile, KeyFile: certs.ServerKeyFile}
	})
	client := srv.Client(t)
	ctx := t.Context()
	for _, step := range []func() error{
		func() error { _, err := client.RoleAdd(ctx, "root"); return err },
		func() error { _, err := client.UserAdd(ctx, "root", "s3cret-password"); return err },
		func() error { _, err := client.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := client.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enable etcd auth: %v", err)
		}
	}
	rcctl := func(args ...string) result {
		var stdout, stderr bytes.Buffer
		err := run(ctx, append([]string{"--etcd-servers", tlsURL.String(), "--etcd-cafile", certs.CAFile}, args...), strings.NewReader(""), &stdout, &stderr)
		return result{stdout.String(), stderr.String(), err}
	}

	assertFails(t, rcctl("get"), "user name is empty", "requires authentication: see --etcd-user and --etcd-password")
	r := rcctl("--etcd-user", "root", "--etcd-password", "wrong-pw-9f3", "get")
	assertFails(t, r, "authentication failed", "see --etcd-user and --etcd-password")
	assertNoSecretIn(t, r, "wrong-pw-9f3")
	assertOK(t, rcctl("--etcd-user", "root", "--etcd-password", "s3cret-password", "run", "web", "--image", "demo-task:latest"))
	r = rcctl("--etcd-user", "root", "--etcd-password", "s3cret-password", "get", "web", "-o", "json")
	assertOK(t, r)
	assertContains(t, r.stdout, `"id": "web"`)
}

func TestEtcdTLSFlagsConnectOverTLS(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	var addr string
	startEtcd(t, func(cfg *embed.Config) {
		addr = cfg.ListenClientUrls[0].Host
		u := url.URL{Scheme: "https", Host: addr}
		cfg.ListenClientUrls = []url.URL{u}
		cfg.AdvertiseClientUrls = []url.URL{u}
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: certs.ServerCertFile, KeyFile: certs.ServerKeyFile, TrustedCAFile: certs.CAFile, ClientCertAuth: true}
	})
	rcctl := func(args ...string) result {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), append([]string{"--etcd-servers", addr, "--etcd-dial-timeout", "2s"}, args...), strings.NewReader(""), &stdout, &stderr)
		return result{stdout.String(), stderr.String(), err}
	}

	assertFails(t, rcctl("get")) // plain http to a TLS port
	tls := []string{"--etcd-cafile", certs.CAFile, "--etcd-certfile", certs.ClientCertFile, "--etcd-keyfile", certs.ClientKeyFile}
	other := certtest.New(t)
	assertFails(t, rcctl("--etcd-cafile", other.CAFile, "get"), "etcd at "+addr+": TLS handshake failed", "x509")
	// the server wants a client certificate: with TLS 1.3 it says so only
	// after the handshake, and that too is named, not taken for a timeout
	assertFails(t, rcctl("--etcd-cafile", certs.CAFile, "get"), "etcd at "+addr+": TLS handshake failed", "certificate required")
	assertOK(t, rcctl(append(tls, "run", "web", "--image", "demo-task:latest")...))
	r := rcctl(append(tls, "get", "web", "-o", "yaml")...)
	assertContains(t, r.stdout, "id: web\n")
}
