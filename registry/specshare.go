package registry

// This file shares each decoded spec between the mirrors of one Store. A
// manager's two roles, the node's agent and the leader, each mirror the
// controllers prefix on their own watch (each sees every change, in
// order, and lists again on its own), and each kept a decoded copy of
// every spec: at 10,000 controllers, twice the specs in the heap, and
// every spec decoded twice. Here the first mirror to meet a spec
// revision decodes it, and any other one that meets the same revision
// while the first still holds it gets the same value.
//
// A revision of a key is one value for good (etcd never rewrites one), so
// the key and its ModRevision name the decoded spec. The share holds each
// one weakly: it lasts while a role holds it, and goes with the last.

import (
	"runtime"
	"sync"
	"weak"

	"github.com/replication-manager/replication-manager/api"
)

// specShare is the decoded specs the mirrors of a Store hold, by key.
type specShare struct {
	mu   sync.Mutex
	held map[string]sharedSpec
}

// sharedSpec is the decoded spec of one revision of a key.
type sharedSpec struct {
	rev  int64
	spec weak.Pointer[api.ReplicationController]
}

// sharedKey names the entry a spec's cleanup removes: its own, not a
// newer revision's.
type sharedKey struct {
	key  string
	spec weak.Pointer[api.ReplicationController]
}

func newSpecShare() *specShare { return &specShare{held: make(map[string]sharedSpec)} }

// decode returns the spec of revision rev of key, whose value is value:
// the one a mirror holds already, or value decoded (and then shared when
// it decodes).
func (h *specShare) decode(key string, value []byte, rev int64) (*api.ReplicationController, error) {
	if rc := h.lookup(key, rev); rc != nil {
		return rc, nil
	}
	rc, err := api.Decode(value)
	if err != nil {
		return nil, err
	}
	return h.keep(key, rev, rc), nil
}

// lookup is the shared spec of revision rev of key, nil when none is held.
func (h *specShare) lookup(key string, rev int64) *api.ReplicationController {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.held[key]; ok && cur.rev == rev {
		return cur.spec.Value()
	}
	return nil
}

// keep shares rc, just decoded as revision rev of key, and returns it; or
// the spec another mirror decoded meanwhile, which it returns instead. An
// older revision than the one shared is not shared.
func (h *specShare) keep(key string, rev int64, rc *api.ReplicationController) *api.ReplicationController {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.held[key]; ok {
		if held := cur.spec.Value(); held != nil {
			switch {
			case cur.rev == rev:
				return held
			case cur.rev > rev:
				return rc
			}
		}
	}
	p := weak.Make(rc)
	h.held[key] = sharedSpec{rev: rev, spec: p}
	runtime.AddCleanup(rc, h.drop, sharedKey{key: key, spec: p})
	return rc
}

// drop forgets k's spec once no one holds it, unless a newer one of its
// key has replaced it.
func (h *specShare) drop(k sharedKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.held[k.key]; ok && cur.spec == k.spec {
		delete(h.held, k.key)
	}
}
