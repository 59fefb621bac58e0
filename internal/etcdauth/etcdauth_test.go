package etcdauth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/internal/etcdauth"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

func TestManagerPermissionsAreTheTenPrefixesTheRegistryIDAndThePolicy(t *testing.T) {
	for _, prefix := range []string{"", "/registry", "/registry/"} {
		got := etcdauth.ManagerPermissions(prefix)
		want := []etcdauth.Permission{
			{"/registry/controllers/", "/registry/controllers0", clientv3.PermissionType(clientv3.PermRead)},
			{"/registry/status/controllers/", "/registry/status/controllers0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/events/", "/registry/events0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/election/", "/registry/election0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/history/", "/registry/history0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/nodes/", "/registry/nodes0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/assignments/", "/registry/assignments0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/reports/", "/registry/reports0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/gonenodes/", "/registry/gonenodes0", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/nodeconfig/", "/registry/nodeconfig0", clientv3.PermissionType(clientv3.PermRead)},
			{"/registry/meta/registry-id", "", clientv3.PermissionType(clientv3.PermReadWrite)},
			{"/registry/meta/policy", "", clientv3.PermissionType(clientv3.PermReadWrite)},
		}
		if !slices.Equal(got, want) {
			t.Errorf("ManagerPermissions(%q) = %v, want %v", prefix, got, want)
		}
	}
}

func TestGrantManagerRoleIsExactAndCanBeRunAgain(t *testing.T) {
	srv := etcdtest.Start(t, fastAuth)
	root := srv.Client(t)
	ctx := t.Context()
	// a permission left over from by hand: it must go
	if _, err := root.RoleAdd(ctx, etcdauth.RoleName); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RoleGrantPermission(ctx, etcdauth.RoleName, "/registry/", clientv3.GetPrefixRangeEnd("/registry/"), clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		if err := etcdauth.GrantManagerRole(ctx, root, "/other/", "rm", "pw-1"); err != nil {
			t.Fatalf("GrantManagerRole: %v", err)
		}
	}
	if err := etcdauth.GrantManagerRole(ctx, root, "/other", "rm", "pw-2"); err != nil {
		t.Fatalf("GrantManagerRole with a new password: %v", err)
	}

	role, err := root.RoleGet(ctx, etcdauth.RoleName)
	if err != nil {
		t.Fatal(err)
	}
	var got []etcdauth.Permission
	for _, p := range role.Perm {
		got = append(got, etcdauth.Permission{Key: string(p.Key), RangeEnd: string(p.RangeEnd), Type: clientv3.PermissionType(p.PermType)})
	}
	want := etcdauth.ManagerPermissions("/other")
	sortPerms := func(p []etcdauth.Permission) {
		slices.SortFunc(p, func(a, b etcdauth.Permission) int { return strings.Compare(a.Key, b.Key) })
	}
	sortPerms(got)
	sortPerms(want)
	if !slices.Equal(got, want) {
		t.Errorf("role permissions = %v, want exactly %v", got, want)
	}
	user, err := root.UserGet(ctx, "rm")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(user.Roles, []string{etcdauth.RoleName}) {
		t.Errorf("user rm has roles %v, want [%s]", user.Roles, etcdauth.RoleName)
	}
	enableAuth(t, root, "root-pw")
	if _, err := root.Authenticate(ctx, "rm", "pw-2"); err != nil {
		t.Errorf("authenticate with the last password: %v", err)
	}
	if _, err := root.Authenticate(ctx, "rm", "pw-1"); !errors.Is(err, rpctypes.ErrAuthFailed) {
		t.Errorf("authenticate with the old password = %v, want %v", err, rpctypes.ErrAuthFailed)
	}
}

func TestGrantManagerRoleWithoutPasswordIsForCertificateAuth(t *testing.T) {
	srv := etcdtest.Start(t, fastAuth)
	root := srv.Client(t)
	for range 2 {
		if err := etcdauth.GrantManagerRole(t.Context(), root, "", "replication-manager", ""); err != nil {
			t.Fatalf("GrantManagerRole: %v", err)
		}
	}
	user, err := root.UserGet(t.Context(), "replication-manager")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(user.Roles, []string{etcdauth.RoleName}) {
		t.Errorf("user has roles %v, want [%s]", user.Roles, etcdauth.RoleName)
	}
	if err := etcdauth.GrantManagerRole(t.Context(), root, "", "", "pw"); err == nil {
		t.Error("GrantManagerRole with an empty user name succeeded")
	}
	enableAuth(t, root, "root-pw")
	if _, err := root.Authenticate(t.Context(), "replication-manager", ""); err == nil {
		t.Error("a user made without a password authenticates with an empty one")
	}
}

func TestRoleAllowsOnlyItsRangesOnceAuthIsOn(t *testing.T) {
	srv := etcdtest.Start(t, fastAuth)
	root := srv.Client(t)
	ctx := t.Context()
	if err := etcdauth.GrantManagerRole(ctx, root, "/registry", "rm", "pw"); err != nil {
		t.Fatal(err)
	}
	enableAuth(t, root, "root-pw")
	rm := userClient(t, srv, "rm", "pw")
	admin := userClient(t, srv, "root", "root-pw")
	if _, err := admin.Put(ctx, "/registry/controllers/web", "{}"); err != nil {
		t.Fatalf("root writes a spec: %v", err)
	}

	allowed := map[string]func() error{
		"read a spec":        func() error { _, err := rm.Get(ctx, "/registry/controllers/web"); return err },
		"list the specs":     func() error { _, err := rm.Get(ctx, "/registry/controllers/", clientv3.WithPrefix()); return err },
		"write a status":     func() error { _, err := rm.Put(ctx, "/registry/status/controllers/web", "{}"); return err },
		"delete a status":    func() error { _, err := rm.Delete(ctx, "/registry/status/controllers/web"); return err },
		"write an event":     func() error { _, err := rm.Put(ctx, "/registry/events/controllers/web/1", "{}"); return err },
		"write the election": func() error { _, err := rm.Put(ctx, "/registry/election/replication-manager/1", "a"); return err },
	}
	for what, op := range allowed {
		if err := op(); err != nil {
			t.Errorf("%s: %v, want it allowed", what, err)
		}
	}
	denied := map[string]func() error{
		"write a spec":  func() error { _, err := rm.Put(ctx, "/registry/controllers/web", "{}"); return err },
		"delete a spec": func() error { _, err := rm.Delete(ctx, "/registry/controllers/web"); return err },
		"read the whole prefix": func() error {
			_, err := rm.Get(ctx, "/registry/", clientv3.WithPrefix())
			return err
		},
		"write outside the prefix": func() error { _, err := rm.Put(ctx, "/elsewhere", "x"); return err },
		"add a user":               func() error { _, err := rm.UserAdd(ctx, "eve", "pw"); return err },
	}
	for what, op := range denied {
		if err := op(); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s: %v, want %v", what, err, rpctypes.ErrPermissionDenied)
		}
	}
}

// fastAuth makes the test server elect itself at once and hash passwords
// at the lowest cost, which the race detector otherwise makes slow.
func fastAuth(cfg *embed.Config) {
	cfg.TickMs, cfg.ElectionMs = 10, 100
	cfg.BcryptCost = 4 // bcrypt.MinCost
}

// enableAuth adds the root user with the root role and turns auth on.
func enableAuth(t *testing.T, client *clientv3.Client, rootPassword string) {
	t.Helper()
	ctx := t.Context()
	for _, step := range []func() error{
		func() error { _, err := client.RoleAdd(ctx, "root"); return err },
		func() error { _, err := client.UserAdd(ctx, "root", rootPassword); return err },
		func() error { _, err := client.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := client.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enable etcd auth: %v", err)
		}
	}
}

func userClient(t *testing.T, srv *etcdtest.Server, user, password string) *clientv3.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.ClientURL}, DialTimeout: 5 * time.Second, Username: user, Password: password, Context: ctx})
	if err != nil {
		t.Fatalf("etcd client as %s: %v", user, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
