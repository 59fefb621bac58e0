// Package etcdctlenv reads the environment variables etcdctl takes its
// connection flags from, so that a shell set up for etcdctl also works for
// the daemon and rcctl: each variable is the default of the matching etcd
// flag, which both programs name alike, and a flag given on the command
// line wins.
//
//	ETCDCTL_ENDPOINTS  --etcd-servers   comma-separated
//	ETCDCTL_USER       --etcd-user      "user", or "user:password" as etcdctl's --user
//	ETCDCTL_PASSWORD   --etcd-password
//	ETCDCTL_CACERT     --etcd-cafile
//	ETCDCTL_CERT       --etcd-certfile
//	ETCDCTL_KEY        --etcd-keyfile
//
// The values are applied after the command line is parsed rather than
// registered as the flags' defaults, so that --help never shows a password.
package etcdctlenv

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// vars pairs each flag with the variable it defaults to, in the order of
// the list above but for the user and password, which Apply handles
// together.
var vars = []struct{ Flag, Env string }{
	{"etcd-servers", "ETCDCTL_ENDPOINTS"},
	{"etcd-cafile", "ETCDCTL_CACERT"},
	{"etcd-certfile", "ETCDCTL_CERT"},
	{"etcd-keyfile", "ETCDCTL_KEY"},
}

// Apply sets every etcd flag of fs that the command line left unset, and
// whose variable getenv gives a value, to that value. The user and password
// follow etcdctl: ETCDCTL_USER "user:password" is split at the first colon
// unless a password comes from elsewhere (--etcd-password,
// ETCDCTL_PASSWORD, or passwordSet, a source of the program's own that
// ranks above the environment), in which case the whole value is the user
// name. A flag fs does not define is skipped.
func Apply(fs *pflag.FlagSet, getenv func(string) string, passwordSet bool) error {
	for _, v := range vars {
		if err := set(fs, v.Flag, v.Env, getenv(v.Env)); err != nil {
			return err
		}
	}
	user, password := getenv("ETCDCTL_USER"), getenv("ETCDCTL_PASSWORD")
	if !fs.Changed("etcd-user") && !fs.Changed("etcd-password") && !passwordSet && password == "" {
		if u, p, ok := strings.Cut(user, ":"); ok {
			user, password = u, p
		}
	}
	if passwordSet {
		password = ""
	}
	if err := set(fs, "etcd-user", "ETCDCTL_USER", user); err != nil {
		return err
	}
	return set(fs, "etcd-password", "ETCDCTL_PASSWORD", password)
}

// set gives flag the value of the variable env when the command line did
// not set it.
func set(fs *pflag.FlagSet, flag, env, value string) error {
	if value == "" || fs.Lookup(flag) == nil || fs.Changed(flag) {
		return nil
	}
	if err := fs.Set(flag, value); err != nil {
		return fmt.Errorf("%s (the default of --%s): %w", env, flag, err)
	}
	return nil
}
