// Package etcdauth sets up the least-privilege etcd role of the
// replication manager: read the specs; read and write status, events and
// the leader election; nothing else. docs/SECURITY.md gives the same role
// as etcdctl commands.
package etcdauth

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/registry"
)

// RoleName is the name of the manager's role.
const RoleName = "replication-manager"

// Permission is one key range of the role: [Key, RangeEnd), which is every
// key starting with Key when RangeEnd is clientv3.GetPrefixRangeEnd(Key).
type Permission struct {
	Key      string
	RangeEnd string
	Type     clientv3.PermissionType
}

// ManagerPermissions returns what a manager with --registry-prefix prefix
// needs ("" is registry.DefaultPrefix), and nothing more:
//
//   - read <prefix>/controllers/: list and watch the specs (the manager
//     never writes a spec, so it can never lose a user's edit);
//   - readwrite <prefix>/status/controllers/: write and delete statuses;
//   - readwrite <prefix>/events/: record events, under a lease;
//   - readwrite <prefix>/election/: campaign, lead and resign;
//   - readwrite <prefix>/history/: record each template it rolls to, and
//     remove them with their controller;
//   - readwrite <prefix>/nodes/: register the node, under its lease;
//   - readwrite <prefix>/assignments/: the leader assigns slots to nodes;
//   - readwrite <prefix>/reports/: each node reports on its share of a
//     controller, under its lease;
//   - readwrite <prefix>/gonenodes/: the leader records a gone node with
//     its last containers, and removes the record;
//   - read <prefix>/nodeconfig/: the leader mirrors what users say of each
//     node (availability, labels); managers never write it;
//   - readwrite on the one key <prefix>/meta/registry-id: the first manager
//     of a registry writes its id there, every later one reads it;
//   - readwrite on the one key <prefix>/meta/policy: the leader publishes
//     its policy there when its term starts.
//
// Leases need no key permission to be granted; keeping one alive or
// revoking it needs write permission on the keys attached to it, which are
// all in the ranges above.
func ManagerPermissions(prefix string) []Permission {
	store := registry.NewStore(nil, prefix)
	perm := func(key string, typ clientv3.PermissionType) Permission {
		return Permission{Key: key, RangeEnd: clientv3.GetPrefixRangeEnd(key), Type: typ}
	}
	return []Permission{
		perm(store.ControllersPrefix(), clientv3.PermissionType(clientv3.PermRead)),
		perm(store.StatusPrefix(), clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.Prefix()+"/events/", clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.Prefix()+"/election/", clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.Prefix()+"/history/", clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.NodesPrefix(), clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.AssignmentsPrefix(), clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.ReportsPrefix(), clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.GoneNodesPrefix(), clientv3.PermissionType(clientv3.PermReadWrite)),
		perm(store.NodeConfigPrefix(), clientv3.PermissionType(clientv3.PermRead)),
		{Key: store.RegistryIDKey(), Type: clientv3.PermissionType(clientv3.PermReadWrite)},
		{Key: store.PolicyKey(), Type: clientv3.PermissionType(clientv3.PermReadWrite)},
	}
}

// GrantManagerRole makes the role RoleName hold exactly
// ManagerPermissions(prefix), creates user (or sets its password when it
// exists) and grants it the role. It can be run again: the end state is
// the same. An empty password creates a user without one, for etcd's
// client certificate authentication, where the certificate's common name
// is the user name. Other roles the user already has are left alone.
//
// client must be allowed to manage users and roles: the root user, or any
// client while auth is still disabled.
func GrantManagerRole(ctx context.Context, client clientv3.Auth, prefix, user, password string) error {
	if user == "" {
		return errors.New("etcdauth: user name is empty")
	}
	if _, err := client.RoleAdd(ctx, RoleName); err != nil && !errors.Is(err, rpctypes.ErrRoleAlreadyExist) {
		return fmt.Errorf("etcdauth: add role %s: %w", RoleName, err)
	}
	want := ManagerPermissions(prefix)
	if err := revokeOthers(ctx, client, want); err != nil {
		return err
	}
	for _, p := range want {
		if _, err := client.RoleGrantPermission(ctx, RoleName, p.Key, p.RangeEnd, p.Type); err != nil {
			return fmt.Errorf("etcdauth: grant %s on %s to role %s: %w", authpb.Permission_Type(p.Type), p.Key, RoleName, err)
		}
	}
	if err := addUser(ctx, client, user, password); err != nil {
		return err
	}
	if _, err := client.UserGrantRole(ctx, user, RoleName); err != nil {
		return fmt.Errorf("etcdauth: grant role %s to user %s: %w", RoleName, user, err)
	}
	return nil
}

// revokeOthers removes from the role every permission that is not wanted,
// such as one an older version granted or one added by hand.
func revokeOthers(ctx context.Context, client clientv3.Auth, want []Permission) error {
	resp, err := client.RoleGet(ctx, RoleName)
	if err != nil {
		return fmt.Errorf("etcdauth: get role %s: %w", RoleName, err)
	}
	wanted := make(map[[2]string]bool, len(want))
	for _, p := range want {
		wanted[[2]string{p.Key, p.RangeEnd}] = true
	}
	for _, p := range resp.Perm {
		if wanted[[2]string{string(p.Key), string(p.RangeEnd)}] {
			continue // granted again, with the wanted type, by the caller
		}
		if _, err := client.RoleRevokePermission(ctx, RoleName, string(p.Key), string(p.RangeEnd)); err != nil {
			return fmt.Errorf("etcdauth: revoke %s from role %s: %w", p.Key, RoleName, err)
		}
	}
	return nil
}

func addUser(ctx context.Context, client clientv3.Auth, user, password string) error {
	_, err := client.UserAddWithOptions(ctx, user, password, &clientv3.UserAddOptions{NoPassword: password == ""})
	if errors.Is(err, rpctypes.ErrUserAlreadyExist) {
		if password == "" {
			return nil
		}
		_, err = client.UserChangePassword(ctx, user, password)
	}
	if err != nil {
		// the password is never part of a message
		return fmt.Errorf("etcdauth: add user %s: %w", user, err)
	}
	return nil
}
