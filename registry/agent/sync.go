package agent

// This file is the sync of one controller: gather what plan needs (the
// newest spec, validated once per revision; the cached containers, dead
// ones inspected, and those whose monitor window ended; the controller's
// record), plan, apply, settle, then write the status and record the
// events. Every error is returned to the worker, which logs it once and
// retries; only an invalid spec is absorbed, because retrying cannot fix
// it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// errTasksNotListed is returned by a sync that ran before the first list of
// containers: Docker has not answered yet.
var errTasksNotListed = errors.New("containers not listed yet")

// syncSlots brings one controller's containers to its
// newest spec. The work queue hands a controller to one worker at a time,
// so the sync owns the controller's record and needs no lock of its own.
func (rm *Agent) syncSlots(ctx context.Context, id string) (err error) {
	start := time.Now()
	result := "success"
	defer func() {
		if err != nil {
			result = "error"
		}
		rm.metrics.observeSync(start, result)
	}()

	spec, exists, known := rm.specs.get(id)
	switch {
	case !known:
		return wrapSync(id, errNotListed)
	case !exists && !rm.wasManaged(id):
		// containers labelled for a controller this registry never had:
		// another registry's; not ours to touch
		result = "unknown"
		return nil
	}
	inputs := rm.inputsOf(id, spec)
	if exists && rm.states.calmAt(id, inputs) {
		result = "unchanged" // calm, and nothing it reads changed since (quiet.go)
		return nil
	}
	record := rm.states.get(id)
	tasks, ok := rm.tasks.list(id)
	if !ok {
		return wrapSync(id, errTasksNotListed)
	}
	in := planInput{
		id: id, tasks: tasks, now: rm.now(),
		registryID: rm.registryID, burst: rm.opts.BurstReplicas,
	}
	in.assigned = rm.slots.of(id)
	var errs []error
	switch {
	case !exists:
		result = "deleted"
	default:
		in.revision, in.createRevision = spec.ModRevision, spec.CreateRevision
		in.spec, in.invalid = rm.validSpec(record, spec)
		in.undecodable = spec.Err != nil
		if in.invalid != nil {
			result = "invalid"
		}
	}
	var groups grouping
	if in.spec != nil {
		in.hash = record.validated.hash
		var err error
		if in.templates, err = rm.templatesOf(ctx, record, in); err != nil {
			errs = append(errs, err)
		}
		in.tasks, in.inits = splitInits(in.tasks)
		groups = groupTasks(in.tasks, in.templates, in.now)
		asked, checkErrs := rm.checkWindows(ctx, in, in.tasks, groups.firsts)
		errs = append(errs, checkErrs...)
		if asked {
			// what the engine answered is in the cache now
			tasks, _ = rm.tasks.list(id)
			in.tasks, in.inits = splitInits(tasks)
			groups = groupTasks(in.tasks, in.templates, in.now)
		}
		in.tasks = groups.firsts
		var inspectErrs []error
		in.tasks, inspectErrs = rm.inspectDead(ctx, in)
		errs = append(errs, inspectErrs...)
	}
	// a copy of the record with the validation result and the templates
	// read from the history, which the sync's end stores back
	in.state = *record

	d := plan(in)
	d.groups, d.orphans = groups.groups, groups.orphans
	if len(d.creates) > 0 {
		ok, err := rm.claimSlots(ctx, id, in.revision, &d, in.assigned, in.inits)
		if err != nil || !ok {
			// not a create until the report says the slots are this
			// node's; an assignment that changed comes with the watch
			d.creates, d.images = nil, nil
			errs = append(errs, err)
			d.requeue(time.Second)
		}
	}
	out := rm.apply(ctx, id, d)
	r := settle(in, d, out)
	errs = append(errs, out.errs...)
	errs = append(errs, out.createErrs...)
	errs = append(errs, out.deleteErrs...)

	*record = r.state
	reported := record.status
	rm.metrics.rolloutSteps.Add(float64(d.rolloutSteps))
	if r.rolledOut > 0 {
		rm.metrics.rolloutDuration.Observe(r.rolledOut.Seconds())
		rm.logger.Info("rollout complete", "controller", id, "revision", in.revision, "took", r.rolledOut.Round(time.Millisecond))
	}
	for _, ev := range r.events {
		rm.record(id, ev)
	}
	switch {
	case r.forget:
		errs = append(errs, rm.forget(ctx, id))
	case r.status != nil && in.invalid == nil: // the leader reports an invalid spec
		errs = append(errs, rm.writeReport(ctx, record, *r.status, r.active, r.inits, r.blocked, r.pulling, in.assigned))
	}
	if r.requeueAfter > 0 {
		rm.queue.AddAfter(id, r.requeueAfter)
	}
	if r.continueRollout {
		rm.later(id)
	}
	err = errors.Join(errs...)
	if !r.forget {
		rm.states.setCalm(id, inputs, calm(in, d, out, r, record.status != reported, err))
	}
	return wrapSync(id, err)
}

// wasManaged reports whether id is a controller of this registry that is
// gone: it has a record (a status, or an earlier sync), or the watch saw
// it deleted.
func (rm *Agent) wasManaged(id string) bool {
	return rm.specs.wasDeleted(id) || rm.states.known(id) || rm.madeHere(id)
}

// madeHere reports whether a container of id carries this registry's id:
// this registry's manager made it, so the controller was this registry's
// even when nothing else is left of it (it was deleted while this node
// was away, and the leader has forgotten it since).
func (rm *Agent) madeHere(id string) bool {
	tasks, _ := rm.tasks.list(id)
	for _, t := range tasks {
		if t.Labels[api.LabelRegistry] == rm.registryID {
			return true
		}
	}
	return false
}

// validSpec returns the decoded spec, or why it cannot be acted on. A spec
// revision never changes, so each is validated once; the result is kept
// in the controller's record.
func (rm *Agent) validSpec(record *controllerState, spec registry.Spec) (*api.ReplicationController, error) {
	if spec.Err != nil {
		return nil, spec.Err
	}
	if record.validated.rev != spec.ModRevision {
		opts := api.ValidateOptions{Key: spec.ID, MaxReplicas: rm.opts.MaxReplicas, Policy: rm.opts.Policy}
		record.validated = validation{rev: spec.ModRevision, err: api.Validate(spec.Controller, opts)}
		if record.validated.err == nil {
			record.validated.hash = api.TemplateHash(&spec.Controller.DesiredState.TaskTemplate)
			record.validated.window = spec.Controller.DesiredState.AvailableAfter()
		}
	}
	if record.validated.err != nil {
		return nil, record.validated.err
	}
	return spec.Controller, nil
}

// inspectDead fills in when the controller's dead containers started and
// stopped, which a container list does not tell (the events path has them
// already), so that plan can tell a crash from a stop. A container found
// running again (someone ran docker start) is then counted, not replaced;
// one that is gone is dropped.
func (rm *Agent) inspectDead(ctx context.Context, in planInput) ([]api.Task, []error) {
	var errs []error
	out := in.tasks[:0] // the cache's list is this sync's own copy
	for _, t := range in.tasks {
		if t.FinishedAt.IsZero() && !t.Active() && t.State != api.StateCreated && t.State != api.StateRemoving &&
			claimOf(in.registryID, in.id, in.spec.DesiredState.ReplicasInSet, t.Labels) == claimOwned {
			full, err := rm.taskControl.InspectTask(ctx, t.ID)
			switch {
			case errors.Is(err, api.ErrTaskNotFound):
				rm.tasks.deleted(t.ID, rm.now())
				continue
			case err != nil:
				errs = append(errs, err)
			default:
				rm.tasks.observe(full)
				t = full
			}
		}
		out = append(out, t)
	}
	return out, errs
}

// forget removes what this node knows of a controller that is gone, once
// its last container is: its report, its record and the spec cache's
// tombstone. The leader forgets the status and history once every node
// has.
func (rm *Agent) forget(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, rm.opts.EtcdTimeout)
	defer cancel()
	if err := rm.forgetVolumes(ctx, id); err != nil {
		return err
	}
	if err := rm.store.DeleteReport(ctx, id, rm.opts.Node.Name); err != nil {
		return err
	}
	rm.states.forget(id)
	rm.specs.forget(id)
	rm.wakes.forget(id)
	return nil
}

// templatesOf returns the templates of the slots assigned here, by hash:
// the spec's, and those of older revisions from the controller's history,
// read once and kept in the record.
func (rm *Agent) templatesOf(ctx context.Context, record *controllerState, in planInput) (map[string]*api.TaskTemplate, error) {
	out := map[string]*api.TaskTemplate{in.hash: &in.spec.DesiredState.TaskTemplate}
	var errs []error
	for slot, a := range in.assigned.All() {
		hash := in.hashOf(slot)
		if out[hash] != nil {
			continue
		}
		if t := record.templates[hash]; t != nil {
			out[hash] = t
			continue
		}
		t, err := rm.historyTemplate(ctx, in.spec, a.Revision, hash)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if record.templates == nil {
			record.templates = map[string]*api.TaskTemplate{}
		}
		record.templates[hash] = t
		out[hash] = t
	}
	for hash := range record.templates {
		if out[hash] == nil {
			delete(record.templates, hash) // no slot runs it any more
		}
	}
	return out, errors.Join(errs...)
}

// historyTemplate reads the template of revision rev of controller rc
// and checks it is the one of hash, and that this node's policy allows
// it: each node enforces its own flags.
func (rm *Agent) historyTemplate(ctx context.Context, rc *api.ReplicationController, rev int64, hash string) (*api.TaskTemplate, error) {
	id := rc.ID
	ctx, cancel := context.WithTimeout(ctx, rm.opts.EtcdTimeout)
	defer cancel()
	r, err := rm.store.GetRevision(ctx, id, rev)
	if errors.Is(err, registry.ErrNotFound) {
		r, err = rm.revisionOfTemplate(ctx, id, hash)
	}
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nil, nil // reported by plan: no template for the slot
	case err != nil:
		return nil, err
	case r.TemplateHash != hash || api.TemplateHash(&r.TaskTemplate) != hash:
		return nil, fmt.Errorf("history of %s: revision %d holds template %s, the assignment says %s", id, rev, r.TemplateHash, hash)
	}
	old := *rc
	old.DesiredState.TaskTemplate = r.TaskTemplate
	if err := api.Validate(&old, api.ValidateOptions{Key: id, MaxReplicas: rm.opts.MaxReplicas, Policy: rm.opts.Policy}); err != nil {
		return nil, fmt.Errorf("history of %s: revision %d: %w", id, rev, err)
	}
	return &r.TaskTemplate, nil
}

// revisionOfTemplate finds template hash in id's history by its hash. An
// assignment names the spec revision it was made at, and the history
// keeps a template under the revision that first brought it: a slot
// assigned at a later revision of the same template (a scale, a change of
// the update strategy) is found here once the spec has moved on. It
// returns ErrNotFound when no record holds the template.
func (rm *Agent) revisionOfTemplate(ctx context.Context, id, hash string) (*api.Revision, error) {
	revs, err := rm.store.ListRevisions(ctx, id)
	if err != nil {
		return nil, err
	}
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].TemplateHash == hash {
			return &revs[i], nil
		}
	}
	return nil, fmt.Errorf("history of %s: template %s: %w", id, hash, registry.ErrNotFound)
}

// createdSlots are the slots of creates.
func createdSlots(creates []taskCreate) []int {
	out := make([]int, 0, len(creates))
	for _, c := range creates {
		out = append(out, slotOf(api.Task{Labels: c.Labels}))
	}
	return out
}

func (rm *Agent) record(id string, ev note) {
	if ev.typ == api.EventWarning {
		rm.logger.Warn(ev.message, "controller", id, "reason", ev.reason)
	} else {
		rm.logger.Info(ev.message, "controller", id, "reason", ev.reason)
	}
	rm.events.record(id, ev.typ, ev.reason, ev.message)
}

// withoutTasks returns tasks minus those in gone, by container id.
func withoutTasks(tasks, gone []api.Task) []api.Task {
	drop := make(map[string]bool, len(gone))
	for _, t := range gone {
		drop[t.ID] = true
	}
	out := make([]api.Task, 0, len(tasks))
	for _, t := range tasks {
		if !drop[t.ID] {
			out = append(out, t)
		}
	}
	return out
}

func taskNames(tasks []api.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.Name
	}
	slices.Sort(out)
	return out
}
