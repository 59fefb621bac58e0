package registry

// This file is what a node knows of the other nodes' shares of each
// controller, from their reports, so that a rolling update keeps the
// controller's bounds over every node (DESIGN.md sections 8 and 10): the
// nodes roll one at a time, in name order, and each counts the others'
// live and available containers against maxSurge and maxUnavailable.

import (
	"encoding/json"
	"sync"

	"github.com/replication-manager/replication-manager/api"
)

// othersShare is the other nodes' part of one controller.
type othersShare struct {
	// live and available count their active and available containers;
	// unavailable those of them that are not available.
	live, available, unavailable int
	// ahead: a node before this one in name order still has outdated
	// containers, or has not reported on the spec this node acts on; this
	// node's turn to roll has not come.
	ahead bool
}

// peerShare is one node's last report on one controller, in counts.
type peerShare struct {
	revision                  int64
	live, available, outdated int
}

// peers mirrors the reports of the nodes other than this one.
type peers struct {
	me    string
	store *Store
	mu    sync.Mutex
	// byID holds, per controller, each other node's share.
	byID map[string]map[string]peerShare
	// changed is called with each controller whose shares changed.
	changed func(id string)
}

func newPeers(store *Store, me string, changed func(string)) *peers {
	return &peers{me: me, store: store, byID: map[string]map[string]peerShare{}, changed: changed}
}

// of returns the other nodes' share of controller id, for a node acting on
// the spec of revision.
func (p *peers) of(id string, revision int64) othersShare {
	p.mu.Lock()
	defer p.mu.Unlock()
	var o othersShare
	for node, s := range p.byID[id] {
		o.live += s.live
		o.available += s.available
		o.unavailable += s.live - s.available
		if node < p.me && (s.outdated > 0 || s.revision < revision) {
			o.ahead = true
		}
	}
	return o
}

// parse returns the controller and node of a report key and its share; ok
// is false for this node's own reports and for what does not decode.
func (p *peers) parse(key string, value []byte) (id, node string, s peerShare, ok bool) {
	id, node, ok = p.store.parseReportKey(key)
	if !ok || node == p.me {
		return "", "", peerShare{}, false
	}
	if value == nil {
		return id, node, peerShare{}, true
	}
	var r api.NodeReport
	if json.Unmarshal(value, &r) != nil {
		return "", "", peerShare{}, false
	}
	st := r.Status
	return id, node, peerShare{revision: st.ObservedRevision, live: st.Replicas, available: st.AvailableReplicas,
		outdated: st.Replicas - st.UpdatedReplicas}, true
}

func (p *peers) reset(keys []kv, _ int64) {
	all := map[string]map[string]peerShare{}
	for _, k := range keys {
		if id, node, s, ok := p.parse(k.key, k.value); ok {
			if all[id] == nil {
				all[id] = map[string]peerShare{}
			}
			all[id][node] = s
		}
	}
	p.mu.Lock()
	old := p.byID
	p.byID = all
	p.mu.Unlock()
	for id := range all {
		p.changed(id)
	}
	for id := range old {
		if _, ok := all[id]; !ok {
			p.changed(id)
		}
	}
}

func (p *peers) put(k kv) {
	id, node, s, ok := p.parse(k.key, k.value)
	if !ok {
		return
	}
	p.mu.Lock()
	if p.byID[id] == nil {
		p.byID[id] = map[string]peerShare{}
	}
	same := p.byID[id][node] == s
	p.byID[id][node] = s
	p.mu.Unlock()
	if !same {
		p.changed(id)
	}
}

func (p *peers) del(key string, _ int64) {
	id, node, _, ok := p.parse(key, nil)
	if !ok {
		return
	}
	p.mu.Lock()
	_, had := p.byID[id][node]
	delete(p.byID[id], node)
	if len(p.byID[id]) == 0 {
		delete(p.byID, id)
	}
	p.mu.Unlock()
	if had {
		p.changed(id)
	}
}
