package registry

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// DefaultPrefix roots every key when no --registry-prefix is given.
const DefaultPrefix = "/registry"

// listPageSize bounds one etcd response while listing; pages are read at
// one revision, so the list is a consistent snapshot.
const listPageSize = 500

// Errors the Store returns.
var (
	ErrNotFound = errors.New("registry: not found")
	ErrExists   = errors.New("registry: already exists")
	// ErrConflict means the spec changed since it was read: the write was
	// refused instead of overwriting someone else's edit.
	ErrConflict = errors.New("registry: spec changed since it was read (conflict)")
)

// Spec is one stored controller spec. A spec that does not decode is still
// returned, with Err set, so that callers can report it without losing it.
type Spec struct {
	// ID is the key's last segment.
	ID             string
	Controller     *api.ReplicationController
	Err            error
	ModRevision    int64
	CreateRevision int64
}

// Store reads and writes controller specs and status under one prefix. It
// never logs; every error is returned wrapped with the key that failed.
type Store struct {
	client *clientv3.Client
	// kv is the client's own retrying KV client, for the requests built
	// as etcd's messages (txnops.go).
	kv     pb.KVClient
	prefix string
	// shared are the specs its mirrors decoded (MirroredSpec).
	shared *specShare
}

// NewStore returns a Store rooted at prefix (DefaultPrefix when empty).
func NewStore(client *clientv3.Client, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	s := &Store{client: client, prefix: strings.TrimSuffix(prefix, "/"), shared: newSpecShare()}
	if client != nil { // a store for its keys only
		s.kv = messagesOf(client)
	}
	return s
}

// messagesOf returns client's KV client of etcd's request messages: the
// one its KV offers (an in-process client, internal/etcdembed), else the
// retrying client on its connection.
func messagesOf(client *clientv3.Client) pb.KVClient {
	if kv, ok := client.KV.(interface{ Messages() pb.KVClient }); ok {
		return kv.Messages()
	}
	return clientv3.RetryKVClient(client)
}

// Prefix is the root of every key.
func (s *Store) Prefix() string { return s.prefix }

// ControllersPrefix is the watched prefix, with its trailing slash.
func (s *Store) ControllersPrefix() string { return s.prefix + "/controllers/" }

// ControllerKey is where the spec of id lives.
func (s *Store) ControllerKey(id string) string { return s.ControllersPrefix() + id }

// StatusPrefix is where statuses live, with its trailing slash.
func (s *Store) StatusPrefix() string { return s.prefix + "/status/controllers/" }

// StatusKey is where the status of id lives.
func (s *Store) StatusKey(id string) string { return s.StatusPrefix() + id }

// DecodeSpec turns a stored value into a Spec; a value that does not decode
// gives a Spec with Err set.
func (s *Store) DecodeSpec(key string, value []byte, modRev, createRev int64) Spec {
	spec := Spec{
		ID:             strings.TrimPrefix(key, s.ControllersPrefix()),
		ModRevision:    modRev,
		CreateRevision: createRev,
	}
	spec.Controller, spec.Err = api.Decode(value)
	return spec
}

// MirroredSpec is DecodeSpec for a mirror of the controllers prefix: a
// revision of a spec is decoded once for every mirror of this Store, and
// the mirrors that hold it at once (a manager's node agent and leader)
// share its Controller, which none of them may change.
func (s *Store) MirroredSpec(k KV) Spec {
	spec := Spec{
		ID:             strings.TrimPrefix(k.Key, s.ControllersPrefix()),
		ModRevision:    k.ModRev,
		CreateRevision: k.CreateRev,
	}
	spec.Controller, spec.Err = s.shared.decode(k.Key, k.Value, k.ModRev)
	return spec
}

// GetController returns the spec of id, or ErrNotFound.
func (s *Store) GetController(ctx context.Context, id string) (Spec, error) {
	key := s.ControllerKey(id)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return Spec{}, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return Spec{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	kv := resp.Kvs[0]
	return s.DecodeSpec(key, kv.Value, kv.ModRevision, kv.CreateRevision), nil
}

// ListControllers returns every spec and the revision the list was read at,
// so that a watch can resume from revision+1 without a gap. Keys below the
// prefix that are not controllers (IsControllerKey) are left out.
func (s *Store) ListControllers(ctx context.Context) ([]Spec, int64, error) {
	specs, _, rev, err := s.listControllers(ctx)
	return specs, rev, err
}

// listControllers is ListControllers that also returns the keys it left
// out.
func (s *Store) listControllers(ctx context.Context) (specs []Spec, ignored []string, rev int64, err error) {
	rev, err = s.listPrefix(ctx, s.ControllersPrefix(), func(key string, value []byte, modRev, createRev int64) {
		if !s.IsControllerKey(key) {
			ignored = append(ignored, key)
			return
		}
		specs = append(specs, s.DecodeSpec(key, value, modRev, createRev))
	})
	return specs, ignored, rev, err
}

// IsControllerKey reports whether key is a controller's: directly below
// the controllers prefix, with no further slash (docs/CONTRACT.md, etcd layout). A
// key such as controllers/a/web is not a controller, whatever id its
// value holds.
func (s *Store) IsControllerKey(key string) bool {
	id, ok := strings.CutPrefix(key, s.ControllersPrefix())
	return ok && id != "" && !strings.Contains(id, "/")
}

// listPrefix reads every key under prefix in pages at one revision.
func (s *Store) listPrefix(ctx context.Context, prefix string, each func(key string, value []byte, modRev, createRev int64)) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(listPageSize)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.client.Get(ctx, from, opts...)
		if err != nil {
			return 0, fmt.Errorf("list %s: %w", prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			each(string(kv.Key), kv.Value, kv.ModRevision, kv.CreateRevision)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// CreateController writes a new spec; it fails with ErrExists when the key
// is taken. It returns the spec's revision.
func (s *Store) CreateController(ctx context.Context, rc *api.ReplicationController) (int64, error) {
	key := s.ControllerKey(rc.ID)
	data, err := api.Encode(rc)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", key, err)
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(data))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("create %s: %w", key, ErrExists)
	}
	return resp.Header.Revision, nil
}

// UpdateController replaces a spec only if its ModRevision is still
// modRevision; otherwise it fails with ErrConflict (or ErrNotFound when the
// key is gone) and writes nothing.
func (s *Store) UpdateController(ctx context.Context, rc *api.ReplicationController, modRevision int64) (int64, error) {
	key := s.ControllerKey(rc.ID)
	data, err := api.Encode(rc)
	if err != nil {
		return 0, fmt.Errorf("update %s: %w", key, err)
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRevision)).
		Then(clientv3.OpPut(key, string(data))).
		Else(clientv3.OpGet(key, clientv3.WithCountOnly())).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("update %s: %w", key, err)
	}
	if !resp.Succeeded {
		if resp.Responses[0].GetResponseRange().Count == 0 {
			return 0, fmt.Errorf("update %s: %w", key, ErrNotFound)
		}
		return 0, fmt.Errorf("update %s: %w", key, ErrConflict)
	}
	return resp.Header.Revision, nil
}

// DeleteController removes a spec; the manager then removes its containers.
func (s *Store) DeleteController(ctx context.Context, id string) error {
	key := s.ControllerKey(id)
	resp, err := s.client.Delete(ctx, key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if resp.Deleted == 0 {
		return fmt.Errorf("delete %s: %w", key, ErrNotFound)
	}
	return nil
}

// GetStatus returns the status of id, or ErrNotFound.
func (s *Store) GetStatus(ctx context.Context, id string) (*api.ReplicationControllerStatus, error) {
	key := s.StatusKey(id)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	st, err := api.DecodeStatus(resp.Kvs[0].Value)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return st, nil
}

// ListStatuses returns every stored status by controller id. A status that
// does not decode is skipped: the manager rewrites it at the next sync.
func (s *Store) ListStatuses(ctx context.Context) (map[string]*api.ReplicationControllerStatus, error) {
	out := make(map[string]*api.ReplicationControllerStatus)
	_, err := s.listPrefix(ctx, s.StatusPrefix(), func(key string, value []byte, _, _ int64) {
		if st, err := api.DecodeStatus(value); err == nil {
			out[strings.TrimPrefix(key, s.StatusPrefix())] = st
		}
	})
	return out, err
}

// PutStatus writes the status of a controller.
func (s *Store) PutStatus(ctx context.Context, st *api.ReplicationControllerStatus) error {
	key := s.StatusKey(st.ID)
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if _, err := s.client.Put(ctx, key, string(data)); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// DeleteStatus removes the status of a controller; a missing one is fine.
func (s *Store) DeleteStatus(ctx context.Context, id string) error {
	key := s.StatusKey(id)
	if _, err := s.client.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// ControllerEvent is one decoded watch event.
type ControllerEvent struct {
	// Deleted is true for a delete; Spec then holds only ID and
	// ModRevision (the revision of the delete).
	Deleted bool
	Spec    Spec
	// Ignored is true for a key that is not a controller's
	// (IsControllerKey); Key names it and Spec is empty.
	Ignored bool
	Key     string
}

// DecodeEvent turns a change of key k (a delete when deleted) into a
// ControllerEvent, its spec shared as MirroredSpec's. It never fails: a
// value that does not decode gives a Spec with Err set, and a delete
// needs no value at all.
func (s *Store) DecodeEvent(k KV, deleted bool) ControllerEvent {
	switch {
	case !s.IsControllerKey(k.Key):
		return ControllerEvent{Ignored: true, Key: k.Key}
	case deleted:
		return ControllerEvent{Deleted: true, Key: k.Key, Spec: Spec{
			ID:          strings.TrimPrefix(k.Key, s.ControllersPrefix()),
			ModRevision: k.ModRev,
		}}
	}
	return ControllerEvent{Key: k.Key, Spec: s.MirroredSpec(k)}
}

// EventPrefix is where the events of controller id live, with its slash.
func (s *Store) EventPrefix(id string) string { return s.prefix + "/events/controllers/" + id + "/" }

// NamedEvent is an event and the key suffix it is stored under.
type NamedEvent struct {
	Name  string
	Event *api.Event
}

// PutEvents stores events in one transaction, attached to lease so that
// etcd removes them when the lease expires.
func (s *Store) PutEvents(ctx context.Context, events []NamedEvent, lease clientv3.LeaseID) error {
	ops := make([]clientv3.Op, 0, len(events))
	for _, ev := range events {
		key := s.EventPrefix(ev.Event.Controller) + ev.Name
		data, err := json.Marshal(ev.Event)
		if err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		ops = append(ops, clientv3.OpPut(key, string(data), clientv3.WithLease(lease)))
	}
	if _, err := s.client.Txn(ctx).Then(ops...).Commit(); err != nil {
		return fmt.Errorf("put %d events under %s: %w", len(events), s.prefix+"/events/", err)
	}
	return nil
}

// ListEvents returns the stored events of controller id, oldest first.
func (s *Store) ListEvents(ctx context.Context, id string) ([]api.Event, error) {
	var out []api.Event
	var bad error
	_, err := s.listPrefix(ctx, s.EventPrefix(id), func(key string, value []byte, _, _ int64) {
		var ev api.Event
		if err := json.Unmarshal(value, &ev); err != nil {
			bad = fmt.Errorf("decode %s: %w", key, err)
			return
		}
		out = append(out, ev)
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// RegistryIDKey is where this registry's id lives.
func (s *Store) RegistryIDKey() string { return s.prefix + "/meta/registry-id" }

// RegistryID returns this registry's id, making a random one first if
// there is none yet: the first manager of a registry writes it, once, with
// a create-if-absent transaction, and every later reader gets that one.
func (s *Store) RegistryID(ctx context.Context) (string, error) {
	key := s.RegistryIDKey()
	id := strings.ToLower(rand.Text()[:16])
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, id)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return "", fmt.Errorf("registry id %s: %w", key, err)
	}
	if resp.Succeeded {
		return id, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 || len(kvs[0].Value) == 0 {
		return "", fmt.Errorf("registry id %s: empty", key)
	}
	return string(kvs[0].Value), nil
}

// GetRegistryID returns this registry's id, or ErrNotFound when no manager
// has made it yet. It writes nothing.
func (s *Store) GetRegistryID(ctx context.Context) (string, error) {
	key := s.RegistryIDKey()
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return string(resp.Kvs[0].Value), nil
}

// GrantLease returns a new lease that expires after ttl.
func (s *Store) GrantLease(ctx context.Context, ttl time.Duration) (clientv3.LeaseID, error) {
	resp, err := s.client.Grant(ctx, int64(ttl/time.Second))
	if err != nil {
		return 0, fmt.Errorf("grant lease: %w", err)
	}
	return resp.ID, nil
}

// HistoryPrefix is where the recorded templates of controller id live,
// with its trailing slash.
func (s *Store) HistoryPrefix(id string) string { return s.prefix + "/history/controllers/" + id + "/" }

// historyRoot is the prefix of every controller's history.
func (s *Store) historyRoot() string { return s.prefix + "/history/controllers/" }

// PutRevision records a template of controller id, unless its revision is
// recorded already.
func (s *Store) PutRevision(ctx context.Context, id string, rev *api.Revision) error {
	key := s.HistoryPrefix(id) + strconv.FormatInt(rev.Revision, 10)
	data, err := json.Marshal(rev)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	_, err = s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(data))).
		Commit()
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// GetRevision returns the recorded template of revision rev of controller
// id, or ErrNotFound. Its Number is as recorded: 0 for a record written
// before records were numbered (ListRevisions numbers those).
func (s *Store) GetRevision(ctx context.Context, id string, rev int64) (*api.Revision, error) {
	key := s.HistoryPrefix(id) + strconv.FormatInt(rev, 10)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	var r api.Revision
	if err := json.Unmarshal(resp.Kvs[0].Value, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return &r, nil
}

// ListRevisions returns the recorded templates of controller id, oldest
// first, numbered (api.NumberRevisions). A record that does not decode is
// skipped.
func (s *Store) ListRevisions(ctx context.Context, id string) ([]api.Revision, error) {
	var out []api.Revision
	_, err := s.listPrefix(ctx, s.HistoryPrefix(id), func(_ string, value []byte, _, _ int64) {
		var r api.Revision
		if json.Unmarshal(value, &r) == nil {
			out = append(out, r)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	api.NumberRevisions(out)
	return out, err
}

// NewestRevisions returns, for every controller with a history, its newest
// recorded template, numbered as ListRevisions numbers it.
func (s *Store) NewestRevisions(ctx context.Context) (map[string]api.Revision, error) {
	all := make(map[string][]api.Revision)
	root := s.historyRoot()
	_, err := s.listPrefix(ctx, root, func(key string, value []byte, _, _ int64) {
		id, _, ok := strings.Cut(strings.TrimPrefix(key, root), "/")
		var r api.Revision
		if !ok || json.Unmarshal(value, &r) != nil {
			return
		}
		all[id] = append(all[id], r)
	})
	out := make(map[string]api.Revision, len(all))
	for id, revs := range all {
		sort.Slice(revs, func(i, j int) bool { return revs[i].Revision < revs[j].Revision })
		api.NumberRevisions(revs)
		out[id] = revs[len(revs)-1]
	}
	return out, err
}

// DeleteRevisions removes recorded templates of controller id: all of
// them, or those older than the newest keep.
func (s *Store) DeleteRevisions(ctx context.Context, id string, keep int) error {
	if keep <= 0 {
		prefix := s.HistoryPrefix(id)
		if _, err := s.client.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
			return fmt.Errorf("delete %s: %w", prefix, err)
		}
		return nil
	}
	revs, err := s.ListRevisions(ctx, id)
	if err != nil {
		return err
	}
	for _, r := range revs[:max(0, len(revs)-keep)] {
		key := s.HistoryPrefix(id) + strconv.FormatInt(r.Revision, 10)
		if _, err := s.client.Delete(ctx, key); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}

// Client is the etcd client the store reads and writes through, for the
// leader's and the node's elections and leases.
func (s *Store) Client() *clientv3.Client { return s.client }
