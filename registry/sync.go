package registry

// This file is the sync of one controller: read the newest spec and the
// cached containers, replace the dead, create or delete until the count
// matches, write the status. Every error is returned to the worker, which
// logs it once and retries; only an invalid spec is absorbed, because
// retrying cannot fix it.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// errTasksNotListed is returned by a sync that ran before the first list of
// containers: Docker has not answered yet.
var errTasksNotListed = errors.New("containers not listed yet")

// syncReplicationController brings one controller's containers to its
// newest spec, under the controller's lock (released on every path).
func (rm *ReplicationManager) syncReplicationController(ctx context.Context, id string) (err error) {
	unlock := rm.locks.lock(id)
	defer unlock()

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
		// another manager's, on another etcd; not ours to touch
		result = "unknown"
		return nil
	case !exists:
		result = "deleted"
		return wrapSync(id, rm.syncDeleted(ctx, id))
	}
	rc, invalid := rm.validSpec(spec)
	if invalid != nil {
		result = "invalid"
		return wrapSync(id, rm.syncInvalid(ctx, spec, invalid))
	}
	return wrapSync(id, rm.syncSpec(ctx, spec.ModRevision, rc))
}

// wasManaged reports whether id is a controller of this registry that is
// gone: it has a status, or the watch saw it deleted.
func (rm *ReplicationManager) wasManaged(id string) bool {
	if rm.specs.wasDeleted(id) {
		return true
	}
	rm.statusMu.Lock()
	defer rm.statusMu.Unlock()
	_, ok := rm.statuses[id]
	return ok
}

// validSpec returns the decoded spec, or why it cannot be acted on. A spec
// revision never changes, so each is validated once.
func (rm *ReplicationManager) validSpec(spec Spec) (*api.ReplicationController, error) {
	if spec.Err != nil {
		return nil, spec.Err
	}
	v, ok := rm.validated.get(spec.ID, spec.ModRevision)
	if !ok {
		opts := api.ValidateOptions{Key: spec.ID, MaxReplicas: rm.opts.MaxReplicas, Policy: rm.opts.Policy}
		v = validation{rev: spec.ModRevision, err: api.Validate(spec.Controller, opts)}
		rm.validated.set(spec.ID, v)
	}
	if v.err != nil {
		return nil, v.err
	}
	return spec.Controller, nil
}

// validations remembers the validation result of each controller's newest
// spec revision.
type validations struct {
	mu      sync.Mutex
	results map[string]validation
}

type validation struct {
	rev int64
	err error
}

func (v *validations) get(id string, rev int64) (validation, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.results[id]
	return r, ok && r.rev == rev
}

func (v *validations) set(id string, r validation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.results == nil {
		v.results = make(map[string]validation)
	}
	v.results[id] = r
}

func (v *validations) forget(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.results, id)
}

// syncInvalid records why a spec cannot be acted on and touches no
// container. It logs and records an event once per spec revision.
func (rm *ReplicationManager) syncInvalid(ctx context.Context, spec Spec, invalid error) error {
	st := rm.lastStatus(spec.ID)
	var errs []error
	if st.ObservedRevision != spec.ModRevision || st.FindCondition(api.ConditionInvalidSpec) == nil {
		rm.logger.Warn("invalid controller spec: containers left as they are until the spec is fixed",
			"controller", spec.ID, "revision", spec.ModRevision, "err", invalid)
		errs = append(errs, rm.events.record(ctx, spec.ID, api.EventWarning, "InvalidSpec", invalid.Error()))
	}
	reason := api.ReasonInvalidSpec
	if spec.Err != nil {
		reason = api.ReasonUndecodable
	}
	st.ObservedRevision = spec.ModRevision
	st.Conditions = setCondition(st.Conditions, api.Condition{
		Type: api.ConditionInvalidSpec, Reason: reason, Message: invalid.Error(),
	}, rm.now().UTC())
	errs = append(errs, rm.writeStatus(ctx, st))
	return errors.Join(errs...)
}

// syncDeleted removes every container of a deleted controller, then its
// status. Ownership is the replicationController label alone: the spec, and
// with it the selector, is gone.
func (rm *ReplicationManager) syncDeleted(ctx context.Context, id string) error {
	tasks, ok := rm.tasks.list(id)
	if !ok {
		return errTasksNotListed
	}
	if len(tasks) > 0 {
		rm.logger.Info("controller deleted: removing its containers", "controller", id, "actual", len(tasks))
	}
	if _, errs := rm.deleteTasks(ctx, tasks); len(errs) > 0 {
		return errors.Join(errs...)
	}
	rm.crashes.forget(id)
	rm.createBackoff.reset(id)
	rm.validated.forget(id)
	return rm.forgetStatus(ctx, id)
}

// syncSpec is the diff of a valid spec.
func (rm *ReplicationManager) syncSpec(ctx context.Context, rev int64, rc *api.ReplicationController) error {
	id := rc.ID
	tasks, ok := rm.tasks.list(id)
	if !ok {
		return errTasksNotListed
	}
	s := &syncState{id: id, now: rm.now()}
	var active, inactive []api.Task
	for _, t := range tasks {
		switch {
		case !api.SelectorMatches(rc.DesiredState.ReplicasInSet, t.Labels):
			// ours by label but outside the selector: not counted, not touched
		case t.Active() || pending(t, s.now):
			active = append(active, t)
		default:
			inactive = append(inactive, t)
		}
	}

	holding := rm.manageDead(ctx, s, inactive)
	active = rm.manageReplicas(ctx, s, rc, active, holding)
	return rm.updateStatus(ctx, s, rev, rc, active)
}

// pendingGrace is how long a container may stay created but not started
// before it counts as abandoned: a create and its start are two calls, and
// another manager (or this one, before a crash) may be between them.
const pendingGrace = 30 * time.Second

// pending reports whether t is between its create and its start: it holds
// its slot and counts as a replica, so that nobody creates a second one.
func pending(t api.Task, now time.Time) bool {
	return t.State == api.StateCreated && now.Sub(t.Created) < pendingGrace
}

// syncState collects what one sync did and what it failed at.
type syncState struct {
	id      string
	now     time.Time
	errs    []error
	failure *api.Condition // the ReplicaFailure to report, if any
	// keepFailure leaves the last ReplicaFailure in place: creates are
	// waiting out a backoff, so the failure has not gone away.
	keepFailure bool
	// requeueAfter is when the controller needs another look even if
	// nothing happens (availability, a backoff ending); 0 for none.
	requeueAfter time.Duration
}

func (s *syncState) fail(reason string, errs []error) {
	s.errs = append(s.errs, errs...)
	s.failure = &api.Condition{Type: api.ConditionReplicaFailure, Reason: reason, Message: errs[0].Error()}
}

func (s *syncState) requeue(after time.Duration) {
	if after > 0 && (s.requeueAfter == 0 || after < s.requeueAfter) {
		s.requeueAfter = after
	}
}

// manageDead counts the crashes among the controller's dead containers,
// keeps the newest one that ran for inspection, renamed out of its slot,
// and removes the others. It returns the dead containers that still hold a slot's name
// because they could not be removed.
func (rm *ReplicationManager) manageDead(ctx context.Context, s *syncState, dead []api.Task) []api.Task {
	if len(dead) == 0 {
		return nil
	}
	dead, removing := rm.inspectDead(ctx, s, dead)
	var holding []api.Task
	for _, t := range removing {
		// Docker is removing it already: not ours to touch, but it may
		// still hold its slot's name
		if holdsSlot(s.id, t) {
			holding = append(holding, t)
		}
	}
	if len(dead) == 0 {
		return holding
	}
	for _, c := range rm.crashes.observe(s.id, dead) {
		rm.logger.Warn("container crashed", "controller", s.id, "container", c.name, "exitCode", c.exitCode, "ranFor", c.ranFor)
		s.errs = append(s.errs, rm.events.record(ctx, s.id, api.EventWarning, "Crashed",
			fmt.Sprintf("container %s exited with code %d after %s", c.name, c.exitCode, c.ranFor.Round(time.Millisecond))))
	}

	// A container that never started (its creator died between create and
	// start) has nothing to inspect: it goes. Of those that ran, the
	// newest is kept and the rest go.
	var ran, remove []api.Task
	for _, t := range dead {
		if t.State == api.StateCreated {
			remove = append(remove, t)
		} else {
			ran = append(ran, t)
		}
	}
	sort.Slice(ran, func(i, j int) bool { return newerDeath(ran[i], ran[j]) })
	if len(ran) > 0 {
		keep := ran[0]
		remove = append(remove, ran[1:]...)
		if holdsSlot(s.id, keep) {
			newName := deadName(s.id, keep.ID)
			if err := rm.taskControl.RenameTask(ctx, keep.ID, newName); err != nil {
				remove = append(remove, keep) // free the slot anyway
			} else {
				rm.tasks.renamed(keep.ID, newName)
				rm.logger.Info("dead container kept for inspection", "controller", s.id, "container", newName)
			}
		}
	}
	if len(remove) == 0 {
		return holding
	}
	deleted, errs := rm.deleteTasks(ctx, remove)
	if len(errs) > 0 {
		s.fail(api.ReasonDeleteFailed, errs)
	}
	for _, t := range withoutTasks(remove, deleted) {
		if holdsSlot(s.id, t) {
			holding = append(holding, t)
		}
	}
	return holding
}

// inspectDead fills in when dead containers started and stopped, which a
// container list does not tell; the events path has them already. It
// returns the dead containers, and apart those Docker is already removing.
func (rm *ReplicationManager) inspectDead(ctx context.Context, s *syncState, tasks []api.Task) (dead, removing []api.Task) {
	for _, t := range tasks {
		if t.FinishedAt.IsZero() && t.State != api.StateCreated && t.State != api.StateRemoving {
			full, err := rm.taskControl.InspectTask(ctx, t.ID)
			switch {
			case errors.Is(err, api.ErrTaskNotFound):
				rm.tasks.forget(t.ID)
				continue
			case err != nil:
				s.errs = append(s.errs, err)
			default:
				rm.tasks.observe(full)
				t = full
			}
		}
		if t.State == api.StateRemoving {
			removing = append(removing, t)
		} else {
			dead = append(dead, t)
		}
	}
	return dead, removing
}

// manageReplicas creates or deletes containers until the count matches,
// within the burst limit and the create and crash backoffs. It returns the
// active containers after the changes.
func (rm *ReplicationManager) manageReplicas(ctx context.Context, s *syncState, rc *api.ReplicationController, active, holding []api.Task) []api.Task {
	desired := rc.DesiredState.Replicas
	switch diff := len(active) - desired; {
	case diff < 0:
		if wait := max(rm.createBackoff.wait(s.id, s.now), rm.crashes.backoff.wait(s.id, s.now)); wait > 0 {
			rm.logger.Debug("creates wait out a backoff", "controller", s.id, "desired", desired, "actual", len(active), "wait", wait)
			s.keepFailure = rm.createBackoff.steps(s.id) > 0
			s.requeue(wait)
			return active
		}
		n := min(-diff, rm.opts.BurstReplicas)
		if rm.crashes.backoff.steps(s.id) > 0 {
			n = 1 // crash looping: one probe per backoff step
		}
		slots := freeSlots(append(holding, active...), n, desired)
		if len(slots) < n {
			// slots held by containers on their way out: their destroy
			// event queues the controller again; the requeue is a backstop
			s.requeue(time.Second)
		}
		if len(slots) == 0 {
			return active
		}
		rm.logger.Info("too few replicas: creating", "controller", s.id, "desired", desired, "actual", len(active), "creating", len(slots))
		created, errs := rm.createTasks(ctx, rc, slots)
		active = append(active, created...)
		if len(created) > 0 {
			s.errs = append(s.errs, rm.events.record(ctx, s.id, api.EventNormal, "Created",
				fmt.Sprintf("created %d container(s): %s", len(created), strings.Join(taskNames(created), ", "))))
		}
		if len(errs) > 0 {
			delay := rm.createBackoff.fail(s.id, s.now)
			s.fail(api.ReasonCreateFailed, errs)
			s.requeue(delay)
			s.errs = append(s.errs, rm.events.record(ctx, s.id, api.EventWarning, "FailedCreate",
				fmt.Sprintf("%v (next attempt in %s)", errs[0], delay)))
		} else {
			rm.createBackoff.reset(s.id)
			if len(active) < desired {
				s.requeue(time.Millisecond) // capped by the burst limit: go on at once
			}
		}
	case diff > 0:
		n := min(diff, rm.opts.BurstReplicas)
		rm.logger.Info("too many replicas: deleting", "controller", s.id, "desired", desired, "actual", len(active), "deleting", n)
		deleted, errs := rm.deleteTasks(ctx, rankForDeletion(active)[:n])
		active = withoutTasks(active, deleted)
		if len(deleted) > 0 {
			s.errs = append(s.errs, rm.events.record(ctx, s.id, api.EventNormal, "Deleted",
				fmt.Sprintf("deleted %d container(s): %s", len(deleted), strings.Join(taskNames(deleted), ", "))))
		}
		if len(errs) > 0 {
			s.fail(api.ReasonDeleteFailed, errs)
			s.errs = append(s.errs, rm.events.record(ctx, s.id, api.EventWarning, "FailedDelete", errs[0].Error()))
		}
	default:
		rm.logger.Debug("replicas as desired", "controller", s.id, "desired", desired, "actual", len(active))
	}
	return active
}

// updateStatus writes the status, queues the next look if one is due, and
// returns the sync's errors.
func (rm *ReplicationManager) updateStatus(ctx context.Context, s *syncState, rev int64, rc *api.ReplicationController, active []api.Task) error {
	now := s.now.UTC()
	st := rm.lastStatus(s.id)
	st.ObservedRevision = rev
	st.Conditions = clearCondition(st.Conditions, api.ConditionInvalidSpec)
	var nextAvailable time.Duration
	st.Replicas = len(active)
	st.ReadyReplicas, st.AvailableReplicas, nextAvailable = countReplicas(active, time.Duration(rc.DesiredState.MinReadySeconds)*time.Second, now)
	s.requeue(nextAvailable)
	s.requeue(rm.crashes.settle(s.id, active, now))

	switch {
	case s.failure != nil:
		st.Conditions = setCondition(st.Conditions, *s.failure, now)
	case !s.keepFailure:
		st.Conditions = clearCondition(st.Conditions, api.ConditionReplicaFailure)
	}
	if c := rm.crashes.condition(s.id, s.now); c != nil {
		st.Conditions = setCondition(st.Conditions, *c, now)
	} else {
		st.Conditions = clearCondition(st.Conditions, api.ConditionCrashLoop)
	}
	s.errs = append(s.errs, rm.writeStatus(ctx, st))
	if s.requeueAfter > 0 {
		rm.queue.AddAfter(s.id, s.requeueAfter)
	}
	return errors.Join(s.errs...)
}

// createTasks creates one container per slot, in slow-start batches. It
// returns the containers created and the errors of the batch that failed.
func (rm *ReplicationManager) createTasks(ctx context.Context, rc *api.ReplicationController, slots []int) ([]api.Task, []error) {
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	container := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	created := make([]api.Task, len(slots))
	ok := make([]bool, len(slots))
	// A template not yet proven starts with one create, then doubles; one
	// whose containers this manager has created without a failure since
	// goes at full speed: slow start guards against an unknown image, not
	// against one that just worked.
	initial := 1
	if rm.proven.has(hash) {
		initial = len(slots)
	}
	_, errs := slowStartBatch(len(slots), initial, func(i int) error {
		spec := api.TaskSpec{
			Name:      taskName(rc.ID, slots[i]),
			Labels:    taskLabels(rc, slots[i], hash),
			Container: container,
		}
		task, err := rm.taskControl.CreateTask(ctx, spec)
		rm.metrics.countContainerOp("create", err)
		if err != nil {
			return err
		}
		rm.tasks.created(task)
		rm.logger.Info("container created", "controller", rc.ID, "container", spec.Name)
		created[i], ok[i] = task, true
		return nil
	})
	out := make([]api.Task, 0, len(slots))
	for i, t := range created {
		if ok[i] {
			out = append(out, t)
		}
	}
	switch {
	case len(errs) > 0:
		rm.proven.forget(hash)
	case len(out) > 0:
		rm.proven.add(hash)
	}
	return out, errs
}

// taskLabels are a new container's labels: a copy of the template's, plus
// the contract's. The template itself is never changed.
func taskLabels(rc *api.ReplicationController, slot int, hash string) map[string]string {
	labels := make(map[string]string, len(rc.DesiredState.TaskTemplate.Labels)+3)
	for k, v := range rc.DesiredState.TaskTemplate.Labels {
		labels[k] = v
	}
	labels[api.LabelController] = rc.ID
	labels[api.LabelSlot] = fmt.Sprint(slot)
	labels[api.LabelTemplateHash] = hash
	return labels
}

// deleteTasks stops and removes tasks in parallel. It returns the tasks
// that are gone and the errors of those that are not.
func (rm *ReplicationManager) deleteTasks(ctx context.Context, tasks []api.Task) (deleted []api.Task, errs []error) {
	results := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Go(func() {
			err := recovered(func() error { return rm.taskControl.DeleteTask(ctx, t.ID) })
			rm.metrics.countContainerOp("delete", err)
			if err != nil {
				results[i] = fmt.Errorf("delete %s: %w", t.Name, err)
				return
			}
			rm.tasks.deleted(t.ID, rm.now())
			rm.logger.Info("container deleted", "controller", t.Labels[api.LabelController], "container", t.Name)
		})
	}
	wg.Wait()
	for i, err := range results {
		if err != nil {
			errs = append(errs, err)
		} else {
			deleted = append(deleted, tasks[i])
		}
	}
	return deleted, errs
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
	sort.Strings(out)
	return out
}
