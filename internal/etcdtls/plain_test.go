package etcdtls

import (
	"strings"
	"testing"
)

func TestCheckPlainRefusesTLSAndAuthFlagsWithoutTLS(t *testing.T) {
	const secret = "s3cret-pw-71"
	ca := Flags{CAFile: "ca.pem"}
	auth := Flags{User: "root", Password: secret}
	for _, tt := range []struct {
		name      string
		endpoints []string
		flags     Flags
		want      string // "" means nil
	}{
		{name: "no TLS or auth flag", endpoints: []string{"http://10.0.0.5:2379", "10.0.0.6:2379"}},
		{name: "https with a CA", endpoints: []string{"https://10.0.0.5:2379"}, flags: ca},
		{name: "https with a password", endpoints: []string{"https://10.0.0.5:2379"}, flags: auth},
		{name: "http with a CA", endpoints: []string{"http://10.0.0.5:2379"}, flags: ca,
			want: "--etcd-servers http://10.0.0.5:2379: must be https:// with --etcd-cafile (over plain http the etcd client ignores the TLS flags and sends the user name and password in clear)"},
		{name: "http in capitals", endpoints: []string{"HTTP://10.0.0.5:2379"}, flags: Flags{User: "root"},
			want: "--etcd-servers HTTP://10.0.0.5:2379: must be https:// with --etcd-user ("},
		{name: "http after https", endpoints: []string{"https://a:2379", " http://b:2379 "}, flags: auth,
			want: "--etcd-servers http://b:2379: must be https:// with --etcd-user, --etcd-password ("},
		{name: "every flag", endpoints: []string{"http://a:2379"}, flags: Flags{CAFile: "ca", CertFile: "c", KeyFile: "k", User: "u", Password: secret},
			want: "--etcd-servers http://a:2379: must be https:// with --etcd-cafile, --etcd-certfile, --etcd-keyfile, --etcd-user, --etcd-password ("},
		{name: "a host:port with TLS files is TLS", endpoints: []string{"10.0.0.5:2379"}, flags: Flags{CAFile: "ca.pem", User: "root", Password: secret}},
		{name: "a host:port with only a password is plain http", endpoints: []string{"10.0.0.5:2379"}, flags: Flags{User: "root", Password: secret, PasswordFromEnv: true},
			want: "--etcd-servers 10.0.0.5:2379: must be https:// with --etcd-user, ETCD_PASSWORD (over plain http the etcd client ignores the TLS flags and sends the user name and password in clear; a host:port without a scheme is plain http unless --etcd-cafile, --etcd-certfile or --etcd-keyfile is given)"},
		{name: "a unix socket stays on the host", endpoints: []string{"unix:///run/etcd.sock", "unix:etcd.sock", "unixs://etcd.sock"}, flags: auth},
		{name: "empty entries are skipped", endpoints: []string{"", " "}, flags: auth},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPlain(tt.endpoints, tt.flags)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckPlain = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Errorf("CheckPlain = %v, want an error starting with %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("CheckPlain = %v: it shows the password", err)
			}
		})
	}
}
