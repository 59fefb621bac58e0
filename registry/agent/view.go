package agent

// This file is the manager's read-only view of its controllers, for the
// status page: what it knows right now, from its own caches, without a
// call to etcd or Docker. Everything it returns is a copy or immutable.

import (
	"sort"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// Controllers returns every controller the manager knows, by id. Callers
// must not change what the views point to.
func (rm *Agent) Controllers() []registry.ControllerView {
	ids := rm.specs.ids()
	sort.Strings(ids)
	out := make([]registry.ControllerView, 0, len(ids))
	for _, id := range ids {
		if v, ok := rm.Controller(id); ok {
			out = append(out, v)
		}
	}
	return out
}

// Controller returns the view of one controller; false when the manager
// knows no spec of that id.
func (rm *Agent) Controller(id string) (registry.ControllerView, bool) {
	spec, exists, _ := rm.specs.get(id)
	if !exists {
		return registry.ControllerView{}, false
	}
	v := registry.ControllerView{ID: id, Spec: spec.Controller, SpecErr: spec.Err, Revision: spec.ModRevision}
	v.Node = rm.opts.Node.Name
	v.Status, v.Pulling = rm.states.published(id)
	tasks, _ := rm.tasks.list(id)
	for _, t := range tasks {
		if api.OfRegistry(rm.registryID, t.Labels) {
			v.Containers = append(v.Containers, t)
		}
	}
	v.Containers = rm.digests.fill(v.Containers)
	sort.Slice(v.Containers, func(i, j int) bool { return v.Containers[i].Name < v.Containers[j].Name })
	return v, true
}
