package main

import (
	"io"
	"slices"
	"testing"
)

// setEtcdctlEnv sets every ETCDCTL_* variable the daemon reads, and
// ETCD_PASSWORD, to env's value or to empty.
func setEtcdctlEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, k := range []string{"ETCDCTL_ENDPOINTS", "ETCDCTL_USER", "ETCDCTL_PASSWORD", "ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY", "ETCD_PASSWORD"} {
		t.Setenv(k, env[k])
	}
}

func TestEtcdctlVariablesAreTheDefaultsOfTheEtcdFlags(t *testing.T) {
	setEtcdctlEnv(t, map[string]string{
		"ETCDCTL_ENDPOINTS": "https://a:2379,https://b:2379",
		"ETCDCTL_USER":      "rm:s3cret-pw-71",
		"ETCDCTL_CACERT":    "ca.pem",
		"ETCDCTL_CERT":      "c.pem",
		"ETCDCTL_KEY":       "k.pem",
	})

	opts, _, err := parseArgs(nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	if want := []string{"https://a:2379", "https://b:2379"}; !slices.Equal(opts.EtcdServers, want) {
		t.Errorf("--etcd-servers %q, want %q", opts.EtcdServers, want)
	}
	got := [...]string{opts.EtcdCAFile, opts.EtcdCertFile, opts.EtcdKeyFile, opts.EtcdUser, opts.EtcdPassword}
	if want := [...]string{"ca.pem", "c.pem", "k.pem", "rm", "s3cret-pw-71"}; got != want {
		t.Errorf("cafile, certfile, keyfile, user, password = %q, want %q", got, want)
	}
	if err := opts.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

func TestEtcdFlagsWinOverTheEtcdctlVariables(t *testing.T) {
	setEtcdctlEnv(t, map[string]string{
		"ETCDCTL_ENDPOINTS": "https://a:2379",
		"ETCDCTL_USER":      "rm",
		"ETCDCTL_PASSWORD":  "env-pw",
		"ETCDCTL_CACERT":    "ca.pem",
	})

	opts, _, err := parseArgs([]string{"--etcd-servers", "https://c:2379", "--etcd-user", "other", "--etcd-password", "flag-pw", "--etcd-cafile", "flag-ca.pem"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	got := [...]string{opts.EtcdCAFile, opts.EtcdUser, opts.EtcdPassword}
	if want := [...]string{"flag-ca.pem", "other", "flag-pw"}; got != want || !slices.Equal(opts.EtcdServers, []string{"https://c:2379"}) {
		t.Errorf("servers %q, cafile, user, password %q; want the flags' https://c:2379, %q", opts.EtcdServers, got, want)
	}
}

func TestEtcdPasswordRanksAboveEtcdctlPassword(t *testing.T) {
	setEtcdctlEnv(t, map[string]string{
		"ETCDCTL_ENDPOINTS": "https://a:2379",
		"ETCDCTL_USER":      "rm",
		"ETCDCTL_PASSWORD":  "etcdctl-pw",
		"ETCD_PASSWORD":     "etcd-pw",
	})

	opts, _, err := parseArgs(nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	if f := opts.etcdFlags(); f.User != "rm" || f.Password != "etcd-pw" || !f.PasswordFromEnv {
		t.Errorf("user %q, password %q (from ETCD_PASSWORD: %t); want rm, etcd-pw from ETCD_PASSWORD", f.User, f.Password, f.PasswordFromEnv)
	}
}

func TestNoEtcdctlEndpointsKeepsTheEmbeddedEtcd(t *testing.T) {
	setEtcdctlEnv(t, nil)

	opts, _, err := parseArgs(nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	if len(opts.EtcdServers) != 0 {
		t.Errorf("--etcd-servers %q, want none (the embedded etcd)", opts.EtcdServers)
	}
}
