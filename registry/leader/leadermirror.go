package leader

// This file is what the leader's mirrors do with each change: decode it
// in the mirror's goroutine (the specs validated once), then, on the
// loop, keep the specs, the nodes, the assignments and the reports, keep
// the nodes' loads (leaderload.go) in step with the assignments, and mark the
// controllers a change concerns for a decision.

import (
	"cmp"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// mirroredPrefixes is how many prefixes targets returns.
const mirroredPrefixes = 5

// mirrored are the prefixes the scheduler mirrors.
func mirrored(store *registry.Store) []string {
	return []string{store.ControllersPrefix(), store.NodesPrefix(), store.NodeConfigPrefix(), store.AssignmentsPrefix(), store.ReportsPrefix()}
}

// targets are the mirrors of the prefixes, each telling seen the
// revision it has handed to the loop.
func (s *ReplicationManager) targets() map[string]registry.MirrorTarget {
	p := s.store
	// each mirror pokes the askers that may wait for its prefix
	caughtUp, view, reports := []*progressAsker{s.caughtUpAsk}, []*progressAsker{s.caughtUpAsk, s.viewAsk}, []*progressAsker{s.caughtUpAsk, s.reportsAsk}
	return map[string]registry.MirrorTarget{
		p.ControllersPrefix(): mirrorFuncs{onReset: s.resetSpecs, onPut: s.putSpec, onDel: s.delSpec, onProgress: s.progressed,
			seen: s.seen[p.ControllersPrefix()], askers: caughtUp, handed: s.handed},
		p.NodesPrefix(): mirrorFuncs{onReset: s.resetNodes, onPut: s.putNode, onDel: s.delNode, onProgress: s.viewProgress(p.NodesPrefix()),
			seen: s.seen[p.NodesPrefix()], askers: view, handed: s.handed},
		p.NodeConfigPrefix(): mirrorFuncs{onReset: s.resetConfigs, onPut: s.putConfig, onDel: s.delConfig, onProgress: s.viewProgress(p.NodeConfigPrefix()),
			seen: s.seen[p.NodeConfigPrefix()], askers: view, handed: s.handed},
		p.AssignmentsPrefix(): mirrorFuncs{onReset: s.resetAssignments, onPut: s.putAssignment, onDel: s.delAssignment, onProgress: s.progressed,
			seen: s.seen[p.AssignmentsPrefix()], askers: caughtUp, handed: s.handed},
		p.ReportsPrefix(): mirrorFuncs{onReset: s.resetReports, onPut: s.putReport, onDel: s.delReport, onProgress: s.reportsProgress,
			seen: s.seen[p.ReportsPrefix()], askers: reports, handed: s.handed},
	}
}

// mirrorFuncs is a mirrorTarget made of functions. Once each has handed
// its change to the loop, seen (when set) takes the change's revision:
// the loop has everything of the prefix up to it once its mailbox is
// empty; then the askers that may wait for seen to rise look again, and
// handed (when set) is told, as the loop may have looked at seen before
// it rose. A progress notification, which hands over no change, sets seen
// first, pokes the askers, then tells onProgress, which wakes the loop.
type mirrorFuncs struct {
	onReset    func([]registry.KV, int64)
	onPut      func(registry.KV)
	onDel      func(string, int64)
	onProgress func(int64)
	seen       *atomic.Int64
	askers     []*progressAsker
	handed     func()
}

// The mirrors are told the revision their watch has reached.
var _ registry.ProgressTarget = mirrorFuncs{}

func (m mirrorFuncs) Reset(keys []registry.KV, rev int64) { m.onReset(keys, rev); m.handedUpTo(rev) }
func (m mirrorFuncs) Put(k registry.KV)                   { m.onPut(k); m.handedUpTo(k.ModRev) }
func (m mirrorFuncs) Del(key string, rev int64)           { m.onDel(key, rev); m.handedUpTo(rev) }
func (m mirrorFuncs) Progress(rev int64) {
	if m.saw(rev) {
		m.poke()
	}
	m.onProgress(rev)
}

// handedUpTo records that every change up to rev is in the loop's
// mailbox.
func (m mirrorFuncs) handedUpTo(rev int64) {
	if !m.saw(rev) {
		return
	}
	m.poke()
	if m.handed != nil {
		m.handed()
	}
}

// poke has the askers look at seen again.
func (m mirrorFuncs) poke() {
	for _, a := range m.askers {
		a.poke()
	}
}

// saw raises seen to rev; false when it was there already.
func (m mirrorFuncs) saw(rev int64) bool {
	if m.seen == nil {
		return false
	}
	for {
		cur := m.seen.Load()
		if rev <= cur {
			return false
		}
		if m.seen.CompareAndSwap(cur, rev) {
			return true
		}
	}
}

// setListed records that prefix is listed, and queues every controller
// once the last one is: the first decisions.
func (s *ReplicationManager) setListed(prefix string) {
	if s.listed[prefix] {
		return
	}
	s.listed[prefix] = true
	if s.ready() {
		ids := slices.Collect(maps.Keys(s.specs))
		for id := range s.assignments {
			ids = append(ids, id)
		}
		for id := range s.reports {
			ids = append(ids, id)
		}
		for id := range s.records {
			ids = append(ids, id) // a status left of a controller deleted meanwhile
		}
		s.queue.add(ids...)
	}
}

// mark queues ids for a decision, once the mirrors are listed.
func (s *ReplicationManager) mark(ids ...string) {
	if s.ready() {
		s.queue.add(ids...)
	}
}

// markReport queues id in the lane of reports, once the mirrors are
// listed.
func (s *ReplicationManager) markReport(id string) {
	if s.ready() {
		s.queue.report(id)
	}
}

// markNode queues, after node changed (came, went, or changed its labels
// or capacity), the controllers that may decide otherwise for it: those
// with a slot on it, and those with slots no node could take.
func (s *ReplicationManager) markNode(node string) {
	if !s.ready() {
		return
	}
	for id := range s.load(node).ids {
		s.queue.add(id)
	}
	for id := range s.wanting {
		s.queue.add(id)
	}
}

// markNodeGone queues, after node went, the controllers with a slot on
// it, once its grace is over: until then a decision has nothing to change
// for it, and at 1,000 slots deciding them twice doubled the time the
// slots took to move. The wanting ones gain no room.
func (s *ReplicationManager) markNodeGone(node string) {
	if !s.ready() {
		return
	}
	ids := slices.Collect(maps.Keys(s.load(node).ids))
	s.opts.Clock.AfterFunc(s.opts.NodeGrace, func() { s.queue.add(ids...) })
}

func (s *ReplicationManager) resetSpecs(keys []registry.KV, _ int64) {
	specs := s.decodeSpecs(keys)
	s.send(func() { s.setSpecs(specs) })
}

// setSpecs replaces the specs with a list's.
func (s *ReplicationManager) setSpecs(specs map[string]*schedSpec) {
	old := s.specs
	for id := range old {
		s.loadOf(id, -1)
	}
	for id, sp := range specs {
		sp.heldFrom(old[id])
	}
	s.specs = specs
	for id := range specs {
		s.loadOf(id, 1)
	}
	for id, sp := range specs {
		if o := old[id]; o == nil || o.spec.ModRevision != sp.spec.ModRevision {
			s.mark(id)
		}
	}
	for id := range old {
		if specs[id] == nil {
			s.mark(id)
		}
	}
	s.setListed(s.store.ControllersPrefix())
}

// putSpec asks, before the loop has the spec, where the watches of the
// nodes are: the spec's decision waits for them (viewrev.go), and the
// answer may be in when the loop comes to it.
func (s *ReplicationManager) putSpec(k registry.KV) {
	sp := s.decodeSpec(k)
	if sp == nil {
		return
	}
	s.viewAsk.want(k.ModRev)
	s.send(func() { s.setSpec(sp.spec.ID, sp) })
}

func (s *ReplicationManager) delSpec(key string, _ int64) {
	if !s.store.IsControllerKey(key) {
		return
	}
	id := strings.TrimPrefix(key, s.store.ControllersPrefix())
	s.send(func() { s.setSpec(id, nil) })
}

// setSpec replaces id's spec (nil: it is gone).
func (s *ReplicationManager) setSpec(id string, sp *schedSpec) {
	s.loadOf(id, -1)
	if sp == nil {
		delete(s.specs, id)
	} else {
		sp.heldFrom(s.specs[id])
		s.specs[id] = sp
	}
	s.loadOf(id, 1) // without a spec, what its slots still hold: nothing
	s.mark(id)
}

// specsPerDecoder is the fewest specs worth a goroutine of decodeSpecs.
const specsPerDecoder = 256

// decodeSpecs decodes and validates the specs of a list on every CPU: at
// 10,000 controllers, doing it on one took most of the time until the
// first decision, while the other CPU waited for it.
func (s *ReplicationManager) decodeSpecs(keys []registry.KV) map[string]*schedSpec {
	decoded := make([]*schedSpec, len(keys))
	decoders := max(1, min(runtime.GOMAXPROCS(0), len(keys)/specsPerDecoder))
	var wg sync.WaitGroup
	for d := range decoders {
		wg.Go(func() {
			for i := d; i < len(keys); i += decoders {
				decoded[i] = s.decodeSpec(keys[i])
			}
		})
	}
	wg.Wait()
	specs := make(map[string]*schedSpec, len(keys))
	for _, sp := range decoded {
		if sp != nil {
			specs[sp.spec.ID] = sp
		}
	}
	return specs
}

// decodeSpec decodes and validates a spec key; nil for a key that is not a
// controller.
func (s *ReplicationManager) decodeSpec(k registry.KV) *schedSpec {
	if !s.store.IsControllerKey(k.Key) {
		return nil
	}
	spec := s.store.MirroredSpec(k)
	sp := &schedSpec{spec: spec, ctl: decide.Controller{ID: spec.ID, Frozen: true}}
	switch {
	case spec.Err != nil:
		sp.invalid = spec.Err
	default:
		sp.invalid = api.Validate(spec.Controller, api.ValidateOptions{Key: spec.ID, MaxReplicas: s.opts.MaxReplicas, Policy: s.opts.Policy})
	}
	if sp.invalid != nil {
		return sp
	}
	ds := &spec.Controller.DesiredState
	sp.hash = api.TemplateHash(&ds.TaskTemplate)
	strategy := ds.Strategy()
	surge, unavailable := strategy.Bounds(ds.Replicas)
	sp.ctl = decide.Controller{
		ID: spec.ID, Replicas: ds.Replicas, Revision: spec.ModRevision, Hash: sp.hash,
		Selector: ds.NodeSelector, Ports: hostPorts(&ds.TaskTemplate), Reserve: reserveOf(&ds.TaskTemplate),
		OnDelete: strategy.Type == api.OnDelete, Paused: ds.Paused,
		Surge: surge, Unavailable: unavailable, AvailableAfter: ds.AvailableAfter(),
		MinReady:         time.Duration(ds.MinReadySeconds) * time.Second,
		ReplaceUnhealthy: ds.TaskTemplate.ReplacesUnhealthy(),
		Rollback:         strategy.Rollback(), MaxFailureRatio: strategy.FailureRatio(),
		ProgressDeadline: time.Duration(*strategy.ProgressDeadlineSeconds) * time.Second,
	}
	return sp
}

func (s *ReplicationManager) resetNodes(keys []registry.KV, rev int64) {
	listed := make([]*api.Node, 0, len(keys))
	for _, k := range keys {
		if n := s.decodeNode(k); n != nil {
			listed = append(listed, n)
		}
	}
	s.send(func() {
		s.setNodes(listed)
		s.viewAt(s.store.NodesPrefix(), rev)
	})
}

// setNodes replaces the nodes with a list's.
func (s *ReplicationManager) setNodes(listed []*api.Node) {
	seen := make(map[string]bool, len(listed))
	for _, n := range listed {
		seen[n.Name] = true
		s.setNode(n)
	}
	for name, n := range s.nodes {
		if !seen[name] && n.alive {
			n.alive, n.goneSince = false, s.now()
			s.nodeWent(name, 0)
		}
		s.syncView(name)
		s.markNode(name)
	}
	s.setListed(s.store.NodesPrefix())
}

// putNode sends even a key that does not decode: the loop has the
// nodes up to its revision all the same (viewAt).
func (s *ReplicationManager) putNode(k registry.KV) {
	n := s.decodeNode(k)
	s.send(func() {
		if n != nil {
			s.registered(n)
		}
		s.viewAt(s.store.NodesPrefix(), k.ModRev)
	})
}

// registered takes n's registration in.
func (s *ReplicationManager) registered(n *api.Node) {
	old, ok := s.nodes[n.Name]
	if !ok || !old.alive {
		s.logger.Info("node registered", "node", n.Name, "labels", api.FormatLabels(n.Labels), "engine", n.EngineID)
	}
	s.setNode(n)
	if !ok || !old.alive || !maps.Equal(old.node.Labels, n.Labels) || old.node.Capacity != n.Capacity {
		s.markNode(n.Name)
	}
}

// setNode records n as registered, in the view too.
func (s *ReplicationManager) setNode(n *api.Node) {
	s.nodes[n.Name] = &nodeState{node: *n, alive: true}
	s.syncView(n.Name)
	s.nodeCame(n.Name)
}

func (s *ReplicationManager) delNode(key string, rev int64) {
	name := strings.TrimPrefix(key, s.store.NodesPrefix())
	s.send(func() {
		if n, ok := s.nodes[name]; ok && n.alive {
			n.alive, n.goneSince = false, s.now()
			s.nodeWent(name, rev)
			s.logger.Warn("node gone; its slots move if it is not back within the grace period", "node", name, "grace", s.opts.NodeGrace)
			s.syncView(name)
			s.markNodeGone(name)
		}
		s.viewAt(s.store.NodesPrefix(), rev)
	})
}

func (s *ReplicationManager) decodeNode(k registry.KV) *api.Node {
	name := strings.TrimPrefix(k.Key, s.store.NodesPrefix())
	var n api.Node
	if err := json.Unmarshal(k.Value, &n); err != nil || n.Name != name {
		s.logger.Warn("node registration does not decode, or names another node; ignored", "key", k.Key, "err", err)
		return nil
	}
	return &n
}

func (s *ReplicationManager) resetConfigs(keys []registry.KV, rev int64) {
	listed := make(map[string]api.NodeConfig, len(keys))
	for _, k := range keys {
		if node, c, ok := s.decodeConfig(k); ok {
			listed[node] = c
		}
	}
	s.send(func() {
		old := s.configs
		s.configs = listed
		for node := range old {
			if _, ok := listed[node]; !ok {
				s.configChanged(node, old[node])
			}
		}
		for node := range listed {
			s.configChanged(node, old[node])
		}
		s.setListed(s.store.NodeConfigPrefix())
		s.viewAt(s.store.NodeConfigPrefix(), rev)
	})
}

// putConfig sends even a key that is not taken: the loop has the configs
// up to its revision all the same (viewAt).
func (s *ReplicationManager) putConfig(k registry.KV) {
	node, c, ok := s.decodeConfig(k)
	s.send(func() {
		if ok {
			old := s.configs[node]
			s.configs[node] = c
			s.configChanged(node, old)
		}
		s.viewAt(s.store.NodeConfigPrefix(), k.ModRev)
	})
}

func (s *ReplicationManager) delConfig(key string, rev int64) {
	node, ok := s.store.ParseNodeConfigKey(key)
	s.send(func() {
		if old, had := s.configs[node]; ok && had {
			delete(s.configs, node)
			s.configChanged(node, old)
		}
		s.viewAt(s.store.NodeConfigPrefix(), rev)
	})
}

// configChanged brings node's entry in the view in step with its config,
// once it differs from old, and queues the controllers that may decide
// otherwise for it.
func (s *ReplicationManager) configChanged(node string, old api.NodeConfig) {
	c := s.configs[node]
	if c.Effective() == old.Effective() && maps.Equal(c.Labels, old.Labels) {
		return
	}
	s.logger.Info("node config changed", "node", node, "availability", c.Effective(), "labels", api.FormatLabels(c.Labels))
	s.syncView(node)
	s.markNode(node)
}

// decodeConfig decodes a node config key; ok is false, with a warning,
// for one that is not one or does not decode or validate (the node then
// keeps the config it had).
func (s *ReplicationManager) decodeConfig(k registry.KV) (string, api.NodeConfig, bool) {
	node, ok := s.store.ParseNodeConfigKey(k.Key)
	if !ok {
		return "", api.NodeConfig{}, false
	}
	c, err := api.DecodeNodeConfig(k.Value)
	if err != nil {
		s.logger.Warn("node config does not decode; ignored", "key", k.Key, "err", err)
		return "", api.NodeConfig{}, false
	}
	return node, c, true
}

// listedAssignment is one assignment key of a list: its assignment, or
// nil and its ModRevision (undecodable) for a value that does not decode.
type listedAssignment struct {
	id          string
	slot        int
	a           *registry.SlotAssignment
	undecodable int64
}

func (s *ReplicationManager) resetAssignments(keys []registry.KV, _ int64) {
	listed := make([]listedAssignment, 0, len(keys))
	for _, k := range keys {
		if id, slot, a, ok := s.decodeAssignment(k); ok {
			l := listedAssignment{id: id, slot: slot, a: a}
			if a == nil {
				l.undecodable = k.ModRev
			}
			listed = append(listed, l)
		}
	}
	s.send(func() { s.setAssignments(listed) })
}

// setAssignments replaces the assignments with a list's.
func (s *ReplicationManager) setAssignments(listed []listedAssignment) {
	for id, slots := range s.assignments {
		for _, a := range slots.All() {
			s.holdSlot(id, a.Node, -1)
		}
	}
	clear(s.assignments)
	clear(s.undecodable)
	// a list is in key order (slot 10 before 2): in slot order, each
	// controller's slots are appended to its assignments, not inserted
	slices.SortStableFunc(listed, func(a, b listedAssignment) int {
		return cmp.Or(strings.Compare(a.id, b.id), cmp.Compare(a.slot, b.slot))
	})
	for _, l := range listed {
		if l.a == nil {
			s.setUndecodable(l.id, l.slot, l.undecodable)
			continue
		}
		s.setAssignment(l.id, l.slot, l.a)
	}
	s.setListed(s.store.AssignmentsPrefix())
}

// putAssignment sends the key as it came: the loop tells the echo of its
// own write by its bytes (ownEcho), and decodes only what is not one.
func (s *ReplicationManager) putAssignment(k registry.KV) {
	s.send(func() {
		if s.ownEcho(k.Key, k.Value, k.ModRev, true) {
			return
		}
		id, slot, a, ok := s.decodeAssignment(k)
		if !ok {
			return
		}
		if cur, ok := s.assignments[id].Get(slot); ok && cur.Rev >= k.ModRev {
			return // the echo of this leader's own write, applied already
		}
		if a == nil {
			s.setUndecodable(id, slot, k.ModRev)
		} else {
			s.setAssignment(id, slot, a)
		}
		s.mark(id)
	})
}

func (s *ReplicationManager) delAssignment(key string, rev int64) {
	s.send(func() {
		if s.ownEcho(key, nil, rev, false) {
			return
		}
		id, slot, ok := s.store.ParseAssignmentKey(key)
		if !ok {
			return
		}
		if rev >= s.undecodable[id][slot] {
			s.setUndecodable(id, slot, 0)
		}
		cur, ok := s.assignments[id].Get(slot)
		if !ok || cur.Rev > rev {
			return // applied already
		}
		s.setAssignment(id, slot, nil)
		s.mark(id)
	})
}

// decodeAssignment decodes an assignment key; ok is false for a key that
// is not one, and the assignment nil, with a warning, for a value that
// does not decode.
func (s *ReplicationManager) decodeAssignment(k registry.KV) (id string, slot int, a *registry.SlotAssignment, ok bool) {
	id, slot, v, ok, err := s.store.DecodeAssignment(k)
	if !ok {
		return "", 0, nil, false
	}
	if err != nil {
		s.logger.Warn("assignment does not decode; the leader writes it again", "key", k.Key, "err", err)
		return id, slot, nil, true
	}
	return id, slot, &v, true
}

// setAssignment replaces slot's assignment of id (nil removes it) and
// keeps the loads in step. It changes id's assignments in place: the
// loop's own (ReplicationManager.assignments).
func (s *ReplicationManager) setAssignment(id string, slot int, a *registry.SlotAssignment) {
	slots := s.assignments[id]
	if cur, ok := slots.Get(slot); ok {
		s.holdSlot(id, cur.Node, -1)
	}
	s.setUndecodable(id, slot, 0)
	if a == nil {
		slots.Delete(slot)
		if slots.Len() == 0 {
			delete(s.assignments, id)
		} else {
			s.assignments[id] = slots
		}
		return
	}
	slots.Set(slot, *a)
	s.assignments[id] = slots
	s.holdSlot(id, a.Node, 1)
}

func (s *ReplicationManager) resetReports(keys []registry.KV, rev int64) {
	all := map[string]map[string]*leaderReport{}
	for _, k := range keys {
		if id, r := s.decodeReport(k); r != nil {
			if all[id] == nil {
				all[id] = map[string]*leaderReport{}
			}
			all[id][r.report.Node] = r
		}
	}
	s.send(func() { s.setReports(all, rev) })
}

// setReports replaces the reports with a list's, as of rev.
func (s *ReplicationManager) setReports(all map[string]map[string]*leaderReport, rev int64) {
	for id, byNode := range s.reports {
		for node := range byNode {
			s.countReport(node, byNode[node], -1)
		}
		if all[id] == nil {
			s.markReport(id)
		}
	}
	for id, byNode := range all {
		for node, r := range byNode {
			s.countReport(node, r, 1)
		}
		s.markReport(id)
	}
	s.reports = all
	s.reportsRev = max(s.reportsRev, rev)
	s.setListed(s.store.ReportsPrefix())
}

func (s *ReplicationManager) putReport(k registry.KV) {
	id, r := s.decodeReport(k)
	if r == nil {
		return
	}
	s.send(func() { s.setReport(id, r.report.Node, r, k.ModRev) })
}

func (s *ReplicationManager) delReport(key string, rev int64) {
	id, node, ok := s.store.ParseReportKey(key)
	if !ok {
		return
	}
	s.send(func() { s.setReport(id, node, nil, rev) })
}

// setReport replaces node's report on id (nil: it is gone) at rev.
func (s *ReplicationManager) setReport(id, node string, r *leaderReport, rev int64) {
	old := s.reports[id][node]
	if old != nil {
		s.countReport(node, old, -1)
	}
	if r == nil {
		if old != nil {
			s.stashReport(id, node, old, rev)
		}
		delete(s.reports[id], node)
		if len(s.reports[id]) == 0 {
			delete(s.reports, id)
		}
	} else {
		if s.reports[id] == nil {
			s.reports[id] = map[string]*leaderReport{}
		}
		s.reports[id][node] = r
		s.countReport(node, r, 1)
	}
	s.reportsRev = max(s.reportsRev, rev)
	s.markReport(id)
}

// reportsProgress records that the reports are as of rev, and queues the
// controllers whose slots waited for that.
func (s *ReplicationManager) reportsProgress(rev int64) {
	s.send(func() {
		s.reportsRev = max(s.reportsRev, rev)
		for id := range s.releasing {
			for _, rel := range s.records[id].released {
				if rel.Rev <= rev {
					s.mark(id)
					break
				}
			}
		}
	})
}

func (s *ReplicationManager) decodeReport(k registry.KV) (string, *leaderReport) {
	id, node, ok := s.store.ParseReportKey(k.Key)
	var r api.NodeReport
	if !ok || json.Unmarshal(k.Value, &r) != nil || r.Node != node || r.Status.ID != id {
		s.logger.Warn("node report does not decode, or names another key; ignored", "key", k.Key)
		return "", nil
	}
	return id, newLeaderReport(id, &r)
}
