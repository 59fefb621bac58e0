package etcdctlenv

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// flags are the etcd flags both programs define, parsed from args.
type flags struct {
	servers        []string
	ca, cert, key  string
	user, password string
	fs             *pflag.FlagSet
}

func parse(t *testing.T, args ...string) *flags {
	t.Helper()
	f := &flags{fs: pflag.NewFlagSet("test", pflag.ContinueOnError)}
	f.fs.SetOutput(io.Discard)
	f.fs.StringSliceVar(&f.servers, "etcd-servers", []string{"127.0.0.1:2379"}, "")
	f.fs.StringVar(&f.ca, "etcd-cafile", "", "")
	f.fs.StringVar(&f.cert, "etcd-certfile", "", "")
	f.fs.StringVar(&f.key, "etcd-keyfile", "", "")
	f.fs.StringVar(&f.user, "etcd-user", "", "")
	f.fs.StringVar(&f.password, "etcd-password", "", "")
	if err := f.fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestApply(t *testing.T) {
	t.Parallel()
	every := map[string]string{
		"ETCDCTL_ENDPOINTS": "https://a:2379,https://b:2379",
		"ETCDCTL_CACERT":    "ca.pem",
		"ETCDCTL_CERT":      "c.pem",
		"ETCDCTL_KEY":       "k.pem",
		"ETCDCTL_USER":      "rm",
		"ETCDCTL_PASSWORD":  "env-pw",
	}
	type want struct {
		servers        []string
		ca, cert, key  string
		user, password string
	}
	for _, tt := range []struct {
		name        string
		env         map[string]string
		args        []string
		passwordSet bool
		want        want
	}{
		{name: "no environment keeps the defaults", want: want{servers: []string{"127.0.0.1:2379"}}},
		{name: "every variable", env: every,
			want: want{[]string{"https://a:2379", "https://b:2379"}, "ca.pem", "c.pem", "k.pem", "rm", "env-pw"}},
		{name: "flags win", env: every,
			args: []string{"--etcd-servers", "https://c:2379", "--etcd-cafile", "f-ca.pem", "--etcd-certfile", "f-c.pem", "--etcd-keyfile", "f-k.pem", "--etcd-user", "f-user", "--etcd-password", "f-pw"},
			want: want{[]string{"https://c:2379"}, "f-ca.pem", "f-c.pem", "f-k.pem", "f-user", "f-pw"}},
		{name: "user:password is split", env: map[string]string{"ETCDCTL_USER": "rm:pw:with:colons"},
			want: want{servers: []string{"127.0.0.1:2379"}, user: "rm", password: "pw:with:colons"}},
		{name: "with ETCDCTL_PASSWORD the user is taken whole", env: map[string]string{"ETCDCTL_USER": "rm:x", "ETCDCTL_PASSWORD": "env-pw"},
			want: want{servers: []string{"127.0.0.1:2379"}, user: "rm:x", password: "env-pw"}},
		{name: "with --etcd-password the user is taken whole", env: map[string]string{"ETCDCTL_USER": "rm:x"}, args: []string{"--etcd-password", "f-pw"},
			want: want{servers: []string{"127.0.0.1:2379"}, user: "rm:x", password: "f-pw"}},
		{name: "a password of the program's own ranks above the environment", env: map[string]string{"ETCDCTL_USER": "rm", "ETCDCTL_PASSWORD": "env-pw"}, passwordSet: true,
			want: want{servers: []string{"127.0.0.1:2379"}, user: "rm"}},
		{name: "the password of ETCDCTL_USER is not given to another user", env: map[string]string{"ETCDCTL_USER": "rm:pw"}, args: []string{"--etcd-user", "other"},
			want: want{servers: []string{"127.0.0.1:2379"}, user: "other"}},
		{name: "ETCDCTL_PASSWORD goes with --etcd-user", env: map[string]string{"ETCDCTL_PASSWORD": "env-pw"}, args: []string{"--etcd-user", "other"},
			want: want{servers: []string{"127.0.0.1:2379"}, user: "other", password: "env-pw"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := parse(t, tt.args...)
			if err := Apply(f.fs, func(k string) string { return tt.env[k] }, tt.passwordSet); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			got := want{f.servers, f.ca, f.cert, f.key, f.user, f.password}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestApplySkipsFlagsTheProgramDoesNotHave(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var user string
	fs.StringVar(&user, "etcd-user", "", "")
	env := map[string]string{"ETCDCTL_ENDPOINTS": "https://a:2379", "ETCDCTL_USER": "rm:pw"}
	if err := Apply(fs, func(k string) string { return env[k] }, false); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if user != "rm" {
		t.Errorf("user %q, want %q", user, "rm")
	}
}

func TestApplyNamesTheVariableOfAValueItCannotParse(t *testing.T) {
	t.Parallel()
	f := parse(t)
	env := map[string]string{"ETCDCTL_ENDPOINTS": `"a:2379`}
	err := Apply(f.fs, func(k string) string { return env[k] }, false)
	if err == nil || !strings.HasPrefix(err.Error(), "ETCDCTL_ENDPOINTS (the default of --etcd-servers): ") {
		t.Errorf("Apply = %v, want an error naming ETCDCTL_ENDPOINTS", err)
	}
}
