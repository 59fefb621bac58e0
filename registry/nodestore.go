package registry

// This file is the Store's part for several Docker hosts (docs/CONTRACT.md,
// Nodes): the nodes, each registered under its acting manager's
// session lease; the assignments of slots to nodes, which only the leader
// writes, each change compared with what it replaces; and the reports, in
// which each node tells the leader about its share of a controller.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unique"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// NodesPrefix is where the nodes are registered, with its trailing slash.
func (s *Store) NodesPrefix() string { return s.prefix + "/nodes/" }

// NodeKey is the key node registers under.
func (s *Store) NodeKey(node string) string { return s.NodesPrefix() + node }

// AssignmentsPrefix is where the slots' assignments live, with its
// trailing slash.
func (s *Store) AssignmentsPrefix() string { return s.prefix + "/assignments/" }

// AssignmentKey is the key of one slot's assignment.
func (s *Store) AssignmentKey(id string, slot int) string {
	return s.AssignmentsPrefix() + id + "/" + strconv.Itoa(slot)
}

// ReportsPrefix is where the nodes' reports live, with its trailing slash.
func (s *Store) ReportsPrefix() string { return s.prefix + "/reports/" }

// ReportKey is the key of node's report on controller id.
func (s *Store) ReportKey(id, node string) string { return s.ReportsPrefix() + id + "/" + node }

// ParseReportKey splits a report key into controller id and node.
func (s *Store) ParseReportKey(key string) (id, node string, ok bool) {
	rest, ok := strings.CutPrefix(key, s.ReportsPrefix())
	if !ok {
		return "", "", false
	}
	id, node, ok = strings.Cut(rest, "/")
	return id, node, ok && id != "" && node != "" && !strings.Contains(node, "/")
}

// NodeElectionKey is the election of the managers of one node.
func (s *Store) NodeElectionKey(node string) string { return s.prefix + "/election/nodes/" + node }

// LeaderElectionKey is the election of the leader, which schedules.
func (s *Store) LeaderElectionKey() string { return s.prefix + "/election/replication-manager" }

// Leader returns the election identity of the manager that leads: the
// candidate of the leader election that campaigned first (as etcd's
// concurrency.Election tells its leader), "" when no manager campaigns,
// so none leads while managers take part in the election.
func (s *Store) Leader(ctx context.Context) (string, error) {
	key := s.LeaderElectionKey() + "/"
	resp, err := s.client.Get(ctx, key, clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// RegisterNode writes the node's registration under lease.
func (s *Store) RegisterNode(ctx context.Context, node *api.Node, lease clientv3.LeaseID) error {
	key := s.NodeKey(node.Name)
	data, err := json.Marshal(node)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if _, err := s.client.Put(ctx, key, string(data), clientv3.WithLease(lease)); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// GetNode returns the registration of node, or ErrNotFound.
func (s *Store) GetNode(ctx context.Context, node string) (*api.Node, error) {
	key := s.NodeKey(node)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	var n api.Node
	if err := json.Unmarshal(resp.Kvs[0].Value, &n); err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return &n, nil
}

// ListNodes returns the registered nodes in name order; a registration
// that does not decode is skipped.
func (s *Store) ListNodes(ctx context.Context) ([]api.Node, error) {
	var out []api.Node
	_, err := s.listPrefix(ctx, s.NodesPrefix(), func(_ string, value []byte, _, _ int64) {
		var n api.Node
		if json.Unmarshal(value, &n) == nil {
			out = append(out, n)
		}
	})
	return out, err
}

// ListAssignments returns every assignment that decodes, by controller id
// and slot.
func (s *Store) ListAssignments(ctx context.Context) (map[string]map[int]api.Assignment, error) {
	out := make(map[string]map[int]api.Assignment)
	_, err := s.listPrefix(ctx, s.AssignmentsPrefix(), func(key string, value []byte, _, _ int64) {
		id, slot, ok := s.ParseAssignmentKey(key)
		a, err := api.DecodeAssignment(value)
		if ok && err == nil {
			if out[id] == nil {
				out[id] = make(map[int]api.Assignment)
			}
			out[id][slot] = a
		}
	})
	return out, err
}

// DecodeAssignment returns the controller id, slot and assignment of an
// assignment key; ok is false for a key that is not one, and err says why
// a value does not decode.
func (s *Store) DecodeAssignment(k KV) (id string, slot int, a SlotAssignment, ok bool, err error) {
	id, slot, ok = s.ParseAssignmentKey(k.Key)
	if !ok {
		return "", 0, SlotAssignment{}, false, nil
	}
	v, err := api.DecodeAssignment(k.Value)
	if err != nil {
		return id, slot, SlotAssignment{}, true, err
	}
	// a few nodes and templates name every slot: one copy of each, not
	// one per slot that the roles keep
	v.Node, v.TemplateHash = unique.Make(v.Node).Value(), unique.Make(v.TemplateHash).Value()
	return id, slot, SlotAssignment{Assignment: v, Rev: k.ModRev}, true, nil
}

// ParseAssignmentKey splits an assignment key into controller id and slot.
func (s *Store) ParseAssignmentKey(key string) (id string, slot int, ok bool) {
	rest, ok := strings.CutPrefix(key, s.AssignmentsPrefix())
	if !ok {
		return "", 0, false
	}
	id, n, ok := strings.Cut(rest, "/")
	if !ok || id == "" || strings.Contains(n, "/") {
		return "", 0, false
	}
	slot, err := strconv.Atoi(n)
	if err != nil || slot < 1 {
		return "", 0, false
	}
	return id, slot, true
}

// ErrReportRefused is a report refused because an assignment it claims
// changed.
var ErrReportRefused = errors.New("registry: an assignment changed since the node saw it")

// PutReport writes node's report on a controller under lease, so that it
// goes with the node, if every comparison in cmps holds (none: always);
// errReportRefused when one does not.
func (s *Store) PutReport(ctx context.Context, r *api.NodeReport, lease clientv3.LeaseID, cmps []clientv3.Cmp) error {
	key := s.ReportKey(r.Status.ID, r.Node)
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	resp, err := s.client.Txn(ctx).If(cmps...).Then(clientv3.OpPut(key, string(data), clientv3.WithLease(lease))).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("put %s: %w", key, err)
	case !resp.Succeeded:
		return fmt.Errorf("put %s: %w", key, ErrReportRefused)
	}
	return nil
}

// DeleteReport removes node's report on controller id; a missing one is
// fine.
func (s *Store) DeleteReport(ctx context.Context, id, node string) error {
	key := s.ReportKey(id, node)
	if _, err := s.client.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// ListReports returns the reports on controller id, one per node that has
// its containers, in node order; "" lists every controller's.
func (s *Store) ListReports(ctx context.Context, id string) ([]api.NodeReport, error) {
	prefix := s.ReportsPrefix()
	if id != "" {
		prefix += id + "/"
	}
	var out []api.NodeReport
	_, err := s.listPrefix(ctx, prefix, func(_ string, value []byte, _, _ int64) {
		var r api.NodeReport
		if json.Unmarshal(value, &r) == nil {
			out = append(out, r)
		}
	})
	return out, err
}

// SlotAssignment is one assignment key: what it says, and its ModRevision,
// which a change compares.
type SlotAssignment struct {
	api.Assignment
	Rev int64
}
