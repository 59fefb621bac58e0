package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/etcdtls"
)

// runEnv runs rcctl with env as its whole environment, and returns the
// cli so that the test can look at the options it ended with.
func runEnv(t *testing.T, env map[string]string, args ...string) (result, *cli) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := newCLI(strings.NewReader(""), &stdout, &stderr)
	c.getenv = func(k string) string { return env[k] }
	err := c.run(t.Context(), args)
	return result{stdout.String(), stderr.String(), err}, c
}

func TestEtcdctlEndpointsIsTheDefaultOfEtcdServers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r, _ := runEnv(t, map[string]string{"ETCDCTL_ENDPOINTS": etcdtest.FreeAddr(t) + "," + e.etcd.ClientURL}, "get", "web", "-o", "json")

	assertStdout(t, r, encode(t, newController("web", 3)))
}

func TestEtcdServersFlagWinsOverEtcdctlEndpoints(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	closed := etcdtest.FreeAddr(t)

	r, c := runEnv(t, map[string]string{"ETCDCTL_ENDPOINTS": closed}, "--etcd-servers", e.etcd.ClientURL, "get", "web", "-o", "json")

	assertStdout(t, r, encode(t, newController("web", 3)))
	if got := strings.Join(c.opts.etcdServers, ","); got != e.etcd.ClientURL {
		t.Errorf("endpoints %q, want only the flag's %q", got, e.etcd.ClientURL)
	}
}

func TestEtcdctlTLSAndAuthVariablesAreTheDefaultsOfTheFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ETCDCTL_ENDPOINTS": "http://10.0.0.5:2379",
		"ETCDCTL_CACERT":    "ca.pem",
		"ETCDCTL_CERT":      "c.pem",
		"ETCDCTL_KEY":       "k.pem",
		"ETCDCTL_USER":      "rm:" + secretValue,
	}

	r, c := runEnv(t, env, "get")

	// read into the flags, they meet the flags' own check of the endpoint
	assertFails(t, r, "--etcd-servers http://10.0.0.5:2379: must be https:// with --etcd-cafile, --etcd-certfile, --etcd-keyfile, --etcd-user, --etcd-password")
	assertNoSecret(t, r)
	got := c.opts.etcdFlags()
	want := etcdtls.Flags{CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem", User: "rm", Password: secretValue}
	if got != want {
		t.Errorf("options %+v, want %+v", got, want)
	}
}

func TestEtcdFlagsWinOverEtcdctlVariables(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ETCDCTL_CACERT":   "ca.pem",
		"ETCDCTL_USER":     "rm",
		"ETCDCTL_PASSWORD": "env-pw",
	}

	r, c := runEnv(t, env, "--etcd-servers", "https://10.0.0.5:2379", "--etcd-cafile", "flag-ca.pem", "--etcd-user", "other", "--etcd-password", "flag-pw", "--etcd-dial-timeout", "0s", "get")

	assertFails(t, r, "--etcd-dial-timeout must be positive") // after the environment is read
	if c.opts.etcdCAFile != "flag-ca.pem" || c.opts.etcdUser != "other" || c.opts.etcdPassword != "flag-pw" {
		t.Errorf("cafile %q, user %q, password %q; want the flags' flag-ca.pem, other, flag-pw", c.opts.etcdCAFile, c.opts.etcdUser, c.opts.etcdPassword)
	}
}
