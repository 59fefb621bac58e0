package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/version"
)

func TestValidateRefusesDockerOverTCPWithoutVerifiedTLS(t *testing.T) {
	for _, tt := range []struct {
		name          string
		flagHost      string
		env           map[string]string
		allowInsecure bool
		wantErr       []string // substrings; none means valid
	}{
		{name: "local socket by default"},
		{name: "unix socket from the environment", env: map[string]string{"DOCKER_HOST": "unix:///var/run/docker.sock"}},
		{name: "unix socket from the flag", flagHost: "unix:///run/user/1000/docker.sock"},
		{
			name: "plain tcp from the environment",
			env:  map[string]string{"DOCKER_HOST": "tcp://10.0.0.7:2375"},
			wantErr: []string{"DOCKER_HOST tcp://10.0.0.7:2375: plain TCP without TLS (DOCKER_CERT_PATH is not set)",
				"--docker-allow-insecure-tcp"},
		},
		{
			name:     "plain tcp from the flag",
			flagHost: "tcp://10.0.0.7:2375",
			wantErr:  []string{"--docker-host tcp://10.0.0.7:2375: plain TCP", "--docker-allow-insecure-tcp"},
		},
		{
			name:     "the flag wins over a safe environment",
			flagHost: "tcp://10.0.0.7:2375",
			env:      map[string]string{"DOCKER_HOST": "unix:///var/run/docker.sock"},
			wantErr:  []string{"--docker-host tcp://10.0.0.7:2375", "--docker-allow-insecure-tcp"},
		},
		{
			name:     "the flag wins over an unsafe environment",
			flagHost: "unix:///var/run/docker.sock",
			env:      map[string]string{"DOCKER_HOST": "tcp://10.0.0.7:2375"},
		},
		{
			name: "tls without verifying the server",
			env:  map[string]string{"DOCKER_HOST": "tcp://10.0.0.7:2376", "DOCKER_CERT_PATH": "/etc/docker/certs"},
			wantErr: []string{"DOCKER_HOST tcp://10.0.0.7:2376: TLS that does not verify the server (DOCKER_TLS_VERIFY is not set)",
				"--docker-allow-insecure-tcp"},
		},
		{
			name: "verified tls",
			env:  map[string]string{"DOCKER_HOST": "tcp://10.0.0.7:2376", "DOCKER_CERT_PATH": "/etc/docker/certs", "DOCKER_TLS_VERIFY": "1"},
		},
		{
			name:     "verified tls with the flag's host",
			flagHost: "tcp://10.0.0.7:2376",
			env:      map[string]string{"DOCKER_CERT_PATH": "/etc/docker/certs", "DOCKER_TLS_VERIFY": "1"},
		},
		{
			name:          "plain tcp allowed by the flag",
			env:           map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:2375"},
			allowInsecure: true,
		},
		{
			name:          "unverified tls allowed by the flag",
			flagHost:      "tcp://10.0.0.7:2376",
			env:           map[string]string{"DOCKER_CERT_PATH": "/etc/docker/certs"},
			allowInsecure: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"DOCKER_HOST", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"} {
				t.Setenv(k, tt.env[k])
			}
			opts := newOptions()
			args := []string{}
			if tt.flagHost != "" {
				args = append(args, "--docker-host", tt.flagHost)
			}
			if tt.allowInsecure {
				args = append(args, "--docker-allow-insecure-tcp")
			}
			if err := parseForTest(opts, args); err != nil {
				t.Fatal(err)
			}

			err := opts.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error with %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestValidateRefusesEtcdTLSAndAuthFlagsWithPlainHTTP(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		env     string // ETCD_PASSWORD
		wantErr string // "" means valid
	}{
		{name: "https with TLS files and a password", args: []string{"--etcd-servers", "https://10.0.0.5:2379", "--etcd-cafile", "ca.pem",
			"--etcd-certfile", "c.pem", "--etcd-keyfile", "k.pem", "--etcd-user", "rm", "--etcd-password", "s3cret-pw-71"}},
		{name: "https with ETCD_PASSWORD", args: []string{"--etcd-servers", "https://10.0.0.5:2379", "--etcd-user", "rm"}, env: "s3cret-pw-71"},
		{name: "http without TLS or auth", args: []string{"--etcd-servers", "http://10.0.0.5:2379"}},
		{name: "a host:port without TLS or auth", args: []string{"--etcd-servers", "10.0.0.5:2379"}},
		{name: "a host:port with TLS files, which the client uses", args: []string{"--etcd-servers", "10.0.0.5:2379", "--etcd-cafile", "ca.pem", "--etcd-user", "rm"}},
		{name: "ETCD_PASSWORD with the embedded etcd", env: "s3cret-pw-71"},
		{name: "http with a CA", args: []string{"--etcd-servers", "http://10.0.0.5:2379", "--etcd-cafile", "ca.pem"},
			wantErr: "--etcd-servers http://10.0.0.5:2379: must be https:// with --etcd-cafile"},
		{name: "http with a client certificate", args: []string{"--etcd-servers", "http://10.0.0.5:2379", "--etcd-certfile", "c.pem", "--etcd-keyfile", "k.pem"},
			wantErr: "--etcd-servers http://10.0.0.5:2379: must be https:// with --etcd-certfile, --etcd-keyfile"},
		{name: "http with a user and password", args: []string{"--etcd-servers", "http://10.0.0.5:2379", "--etcd-user", "rm", "--etcd-password", "s3cret-pw-71"},
			wantErr: "--etcd-servers http://10.0.0.5:2379: must be https:// with --etcd-user, --etcd-password"},
		{name: "http with ETCD_PASSWORD", args: []string{"--etcd-servers", "http://10.0.0.5:2379", "--etcd-user", "rm"}, env: "s3cret-pw-71",
			wantErr: "--etcd-servers http://10.0.0.5:2379: must be https:// with --etcd-user, ETCD_PASSWORD"},
		{name: "one http endpoint among https ones", args: []string{"--etcd-servers", "https://a:2379,http://b:2379", "--etcd-cafile", "ca.pem"},
			wantErr: "--etcd-servers http://b:2379: must be https:// with --etcd-cafile"},
		{name: "a host:port with only a password", args: []string{"--etcd-servers", "10.0.0.5:2379", "--etcd-user", "rm", "--etcd-password", "s3cret-pw-71"},
			wantErr: "--etcd-servers 10.0.0.5:2379: must be https:// with --etcd-user, --etcd-password"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ETCD_PASSWORD", tt.env)
			opts := newOptions()
			if err := parseForTest(opts, tt.args); err != nil {
				t.Fatal(err)
			}
			err := opts.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error with %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret-pw-71") {
				t.Errorf("Validate() = %v: it shows the password", err)
			}
		})
	}
}

func TestAllowFlagsMakeThePolicy(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want api.SecurityPolicy
	}{
		{nil, api.SecurityPolicy{}},
		{[]string{"--allow-host-ports"}, api.SecurityPolicy{AllowHostPorts: true}},
		{[]string{"--allow-cap-add", "--allow-cap-add-all"}, api.SecurityPolicy{AllowCapAdd: true, AllowCapAddAll: true}},
		{[]string{"--allow-privileged", "--allow-host-network", "--allow-host-pid", "--allow-host-ipc", "--allow-host-mounts",
			"--allow-devices", "--allow-cap-add", "--allow-cap-add-all", "--allow-host-ports"}, api.AllowAllPolicy()},
	} {
		opts := newOptions()
		if err := parseForTest(opts, tt.args); err != nil {
			t.Fatalf("parse %q: %v", tt.args, err)
		}
		if err := opts.Validate(); err != nil {
			t.Errorf("Validate with %q: %v", tt.args, err)
		}
		if got := opts.policy(); got != tt.want {
			t.Errorf("policy with %q = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestValidateRefusesCapAddAllWithoutCapAdd(t *testing.T) {
	opts := newOptions()
	if err := parseForTest(opts, []string{"--allow-cap-add-all"}); err != nil {
		t.Fatal(err)
	}
	want := "--allow-cap-add-all: needs --allow-cap-add, which allows capAdd at all"
	if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate() = %v, want an error with %q", err, want)
	}
}

func TestValidateBoundsMaxReplicas(t *testing.T) {
	t.Setenv("DOCKER_HOST", "") // the local socket: no transport error
	for _, tt := range []struct {
		value string
		want  string // "" means valid
	}{
		{"1", ""},
		{"1000", ""},
		{fmt.Sprint(api.MaxMaxReplicas), ""},
		{"0", "--max-replicas: must be at least 1, got 0"},
		{"-1", "--max-replicas: must be at least 1, got -1"},
		{fmt.Sprint(api.MaxMaxReplicas + 1), fmt.Sprintf("--max-replicas: must be at most %d, got %d", api.MaxMaxReplicas, api.MaxMaxReplicas+1)},
		{"1000000000", "--max-replicas: must be at most 100000, got 1000000000"},
	} {
		opts := newOptions()
		if err := parseForTest(opts, []string{"--max-replicas", tt.value}); err != nil {
			t.Fatalf("parse --max-replicas %s: %v", tt.value, err)
		}
		err := opts.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("--max-replicas %s: Validate() = %v, want nil", tt.value, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("--max-replicas %s: Validate() = %v, want %q", tt.value, err, tt.want)
		}
	}
}

func TestRunRefusesDockerOverPlainTCPBeforeStartingAnything(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://10.0.0.7:2375")
	t.Setenv("DOCKER_CERT_PATH", "")
	t.Setenv("DOCKER_TLS_VERIFY", "")
	dataDir := t.TempDir() + "/etcd"
	err := run(t.Context(), []string{"--etcd-data-dir", dataDir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DOCKER_HOST tcp://10.0.0.7:2375") || !strings.Contains(err.Error(), "--docker-allow-insecure-tcp") {
		t.Fatalf("run() = %v, want the Docker TCP refusal", err)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the embedded etcd's data dir exists (%v): run started etcd before refusing", err)
	}
}

// parseForTest parses args into opts as run does.
func parseForTest(opts *options, args []string) error {
	flags := pflag.NewFlagSet("replication-manager", pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	opts.AddFlags(flags)
	return flags.Parse(args)
}

func TestHelpGoesToStdoutAndAFlagMistakeToStderr(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, &stdout, &stderr); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("run --help = %v, want pflag.ErrHelp", err)
	}
	if !strings.Contains(stdout.String(), "--etcd-servers") || stderr.Len() != 0 {
		t.Errorf("--help: stdout %q, stderr %q; want the flags on stdout only", stdout.String(), stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	if len(lines) < 3 || lines[0] != "Usage: replication-manager [flags]" ||
		!strings.HasPrefix(lines[2], "replication-manager keeps the containers") ||
		strings.Index(stdout.String(), "--etcd-servers") < strings.Index(stdout.String(), lines[2]) {
		t.Errorf("--help:\n%s\nwant the synopsis line first, then what the daemon does, then the flags", stdout.String())
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"--no-such-flag"}, &stdout, &stderr); err == nil {
		t.Fatal("run --no-such-flag succeeded")
	}
	if !strings.Contains(stderr.String(), "--etcd-servers") || stdout.Len() != 0 {
		t.Errorf("a flag mistake: stdout %q, stderr %q; want the flags on stderr only", stdout.String(), stderr.String())
	}
}

func TestVersionPrintsTheBuildLineAndStartsNothing(t *testing.T) {
	dataDir := t.TempDir() + "/etcd"
	var stdout, stderr bytes.Buffer
	// --workers 0 would fail Validate: --version comes before it
	err := run(t.Context(), []string{"--version", "--workers", "0", "--etcd-data-dir", dataDir}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run --version = %v, want nil", err)
	}
	if want := version.String("replication-manager") + "\n"; stdout.String() != want || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q; want stdout %q only", stdout.String(), stderr.String(), want)
	}
	if !strings.HasPrefix(stdout.String(), "replication-manager (devel)") {
		t.Errorf("stdout %q, want it to start with %q", stdout.String(), "replication-manager (devel)")
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the embedded etcd's data dir exists (%v): --version started etcd", err)
	}
}

func TestRunRefusesPositionalArgumentsBeforeStartingAnything(t *testing.T) {
	for _, args := range [][]string{
		{"extra-arg"},
		{"--workers", "2", "extra-arg", "more"},
		{"--version", "extra-arg"},
		{"--", "extra-arg"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dataDir := t.TempDir() + "/etcd"
			var stdout bytes.Buffer
			err := run(t.Context(), append([]string{"--etcd-data-dir", dataDir}, args...), &stdout, io.Discard)
			want := `unexpected argument "extra-arg": replication-manager takes only flags (see --help)`
			if err == nil || err.Error() != want {
				t.Fatalf("run(%q) = %v, want %q", args, err, want)
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the embedded etcd's data dir exists (%v): run started etcd before refusing", err)
			}
		})
	}
}

func TestExitCodeIsOneForAnythingButAUsageError(t *testing.T) {
	if code := exitCode(errors.New("etcd: boom")); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}
