package registry

// This file is the leader's published policy (docs/CONTRACT.md, etcd
// layout): what its --allow-* flags and --max-replicas accept, at
// <prefix>/meta/policy, so that a client such as rcctl can refuse a spec
// before writing it rather than leave the user to find an InvalidSpec
// condition afterwards. The leader writes it when its term starts, guarded
// by its election as its other writes are; clients only read it.

import (
	"context"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// Policy is the value of <prefix>/meta/policy: the security policy and the
// replica limit of the manager that leads, in JSON with camelCase names.
// Each Allow field is the daemon flag of the same name (AllowHostPorts is
// --allow-host-ports).
type Policy struct {
	AllowPrivileged  bool `json:"allowPrivileged"`
	AllowHostNetwork bool `json:"allowHostNetwork"`
	AllowHostPID     bool `json:"allowHostPID"`
	AllowHostIPC     bool `json:"allowHostIPC"`
	AllowHostMounts  bool `json:"allowHostMounts"`
	AllowDevices     bool `json:"allowDevices"`
	AllowCapAdd      bool `json:"allowCapAdd"`
	AllowCapAddAll   bool `json:"allowCapAddAll"`
	AllowHostPorts   bool `json:"allowHostPorts"`
	// MaxReplicas is --max-replicas; 0 (absent) means it is not known.
	MaxReplicas int `json:"maxReplicas,omitempty"`
	// Leader is the election identity of the manager that published it.
	Leader string `json:"leader,omitempty"`
	// Elected says the managers take part in the leader election
	// (--leader-elect): while one leads, it holds the election's key
	// (Store.Leader), and none leads while no manager campaigns.
	Elected bool `json:"elected,omitempty"`
}

// NewPolicy is the policy a manager publishes: its security policy, its
// replica limit and its identity in the election.
func NewPolicy(sp api.SecurityPolicy, maxReplicas int, leader string) Policy {
	return Policy{
		AllowPrivileged:  sp.AllowPrivileged,
		AllowHostNetwork: sp.AllowHostNetwork,
		AllowHostPID:     sp.AllowHostPID,
		AllowHostIPC:     sp.AllowHostIPC,
		AllowHostMounts:  sp.AllowHostMounts,
		AllowDevices:     sp.AllowDevices,
		AllowCapAdd:      sp.AllowCapAdd,
		AllowCapAddAll:   sp.AllowCapAddAll,
		AllowHostPorts:   sp.AllowHostPorts,
		MaxReplicas:      maxReplicas,
		Leader:           leader,
	}
}

// Security is the security policy p publishes, as api.Validate takes it.
func (p Policy) Security() api.SecurityPolicy {
	return api.SecurityPolicy{
		AllowPrivileged:  p.AllowPrivileged,
		AllowHostNetwork: p.AllowHostNetwork,
		AllowHostPID:     p.AllowHostPID,
		AllowHostIPC:     p.AllowHostIPC,
		AllowHostMounts:  p.AllowHostMounts,
		AllowDevices:     p.AllowDevices,
		AllowCapAdd:      p.AllowCapAdd,
		AllowCapAddAll:   p.AllowCapAddAll,
		AllowHostPorts:   p.AllowHostPorts,
	}
}

// EncodePolicy is the stored form of p.
func EncodePolicy(p Policy) ([]byte, error) {
	return json.Marshal(p)
}

// DecodePolicy reads a stored policy. Fields it does not know are
// ignored, so that a client reads the policy of a newer manager; a field
// that is absent is false, which refuses: a client never allows more than
// the policy says.
func DecodePolicy(data []byte) (Policy, error) {
	var p Policy
	if err := json.Unmarshal(data, &p); err != nil {
		return Policy{}, err
	}
	if p.MaxReplicas < 0 {
		return Policy{}, fmt.Errorf("maxReplicas: must not be negative, got %d", p.MaxReplicas)
	}
	return p, nil
}

// PolicyKey is where the leader publishes its policy.
func (s *Store) PolicyKey() string { return s.prefix + "/meta/policy" }

// PublishPolicy writes p under guard (the leader's election comparison;
// none without an election) in one transaction. A guard that fails writes
// nothing and returns ErrNotLeader.
func (s *Store) PublishPolicy(ctx context.Context, guard []clientv3.Cmp, p Policy) error {
	key := s.PolicyKey()
	data, err := EncodePolicy(p)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	resp, err := s.client.Txn(ctx).If(guard...).Then(clientv3.OpPut(key, string(data))).Commit()
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("put %s: %w", key, ErrNotLeader)
	}
	return nil
}

// GetPolicy returns the published policy, or ErrNotFound when no leader
// has published one (none has led yet, or every one predates the key). A
// value that does not decode is an error naming the key.
func (s *Store) GetPolicy(ctx context.Context) (Policy, error) {
	key := s.PolicyKey()
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return Policy{}, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return Policy{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	p, err := DecodePolicy(resp.Kvs[0].Value)
	if err != nil {
		return Policy{}, fmt.Errorf("decode %s: %w", key, err)
	}
	return p, nil
}
