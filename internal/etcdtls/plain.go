package etcdtls

// This file refuses TLS and auth flags with an endpoint the etcd client
// reaches without TLS: the client silently drops its TLS settings there and
// would send the user name and password in clear.

import (
	"fmt"
	"strings"
)

// Flags are the TLS and auth settings for etcd, which the daemon and rcctl
// take under the same flag names.
type Flags struct {
	CAFile   string // --etcd-cafile
	CertFile string // --etcd-certfile
	KeyFile  string // --etcd-keyfile
	User     string // --etcd-user
	Password string // --etcd-password
	// PasswordFromEnv says that the password comes from the ETCD_PASSWORD
	// environment variable instead of --etcd-password.
	PasswordFromEnv bool
}

// TLSFiles reports whether a CA, certificate or key is given: the etcd
// client then has a TLS configuration, which it uses for a host:port
// without a scheme too.
func (f Flags) TLSFiles() bool {
	return f.CAFile != "" || f.CertFile != "" || f.KeyFile != ""
}

// given names the flags that are set, in the order of the fields.
func (f Flags) given() []string {
	var names []string
	for _, s := range []struct {
		name string
		set  bool
	}{
		{"--etcd-cafile", f.CAFile != ""},
		{"--etcd-certfile", f.CertFile != ""},
		{"--etcd-keyfile", f.KeyFile != ""},
		{"--etcd-user", f.User != ""},
		{"--etcd-password", f.Password != "" && !f.PasswordFromEnv},
		{"ETCD_PASSWORD", f.PasswordFromEnv},
	} {
		if s.set {
			names = append(names, s.name)
		}
	}
	return names
}

// CheckPlain returns an error naming the first of endpoints that the etcd
// client reaches over plain TCP, when any of f is set; else nil.
//
// An endpoint is plain when it is an http:// URL (in any case): the client
// drops its TLS settings for it. A host:port without a scheme is what etcd
// takes it for, plain http, unless f.TLSFiles(): with a TLS configuration
// the client uses TLS for it (and rcctl writes it as https://), so it
// counts as https. https:// is TLS. unix:// and unixs:// sockets do not
// leave the host and are not refused.
func CheckPlain(endpoints []string, f Flags) error {
	given := f.given()
	if len(given) == 0 {
		return nil
	}
	for _, ep := range endpoints {
		ep = strings.TrimSpace(ep)
		if ep == "" || !plain(ep, f.TLSFiles()) {
			continue
		}
		hint := ""
		if !strings.Contains(ep, "://") {
			hint = "; a host:port without a scheme is plain http unless --etcd-cafile, --etcd-certfile or --etcd-keyfile is given"
		}
		return fmt.Errorf("--etcd-servers %s: must be https:// with %s (over plain http the etcd client ignores the TLS flags and sends the user name and password in clear%s)",
			ep, strings.Join(given, ", "), hint)
	}
	return nil
}

// plain reports whether the etcd client reaches ep without TLS.
func plain(ep string, tlsFiles bool) bool {
	lower := strings.ToLower(ep)
	switch {
	case strings.HasPrefix(lower, "http://"):
		return true
	case strings.Contains(lower, "://"), strings.HasPrefix(lower, "unix:"), strings.HasPrefix(lower, "unixs:"):
		return false // https, a unix socket, or another scheme that is not http
	default: // host:port
		return !tlsFiles
	}
}
