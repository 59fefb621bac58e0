package registry

// This file is the sync of one controller: read the newest spec, list its
// containers, create or delete until the count matches, write the status.
// Every error is returned to the worker, which logs it once and retries;
// only an invalid spec is absorbed, because retrying cannot fix it.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

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

// validSpec returns the decoded spec, or why it cannot be acted on.
func (rm *ReplicationManager) validSpec(spec Spec) (*api.ReplicationController, error) {
	if spec.Err != nil {
		return nil, spec.Err
	}
	if err := api.Validate(spec.Controller, api.ValidateOptions{Key: spec.ID, MaxReplicas: rm.opts.MaxReplicas}); err != nil {
		return nil, err
	}
	return spec.Controller, nil
}

// syncInvalid records why a spec cannot be acted on and touches no
// container. It logs once per spec revision, not once per resync.
func (rm *ReplicationManager) syncInvalid(ctx context.Context, spec Spec, invalid error) error {
	st := rm.lastStatus(spec.ID)
	if st.ObservedRevision != spec.ModRevision || st.FindCondition(api.ConditionInvalidSpec) == nil {
		rm.logger.Warn("invalid controller spec: containers left as they are until the spec is fixed",
			"controller", spec.ID, "revision", spec.ModRevision, "err", invalid)
	}
	reason := api.ReasonInvalidSpec
	if spec.Err != nil {
		reason = api.ReasonUndecodable
	}
	st.ObservedRevision = spec.ModRevision
	st.Conditions = setCondition(clearCondition(st.Conditions, api.ConditionReplicaFailure), api.Condition{
		Type: api.ConditionInvalidSpec, Reason: reason, Message: invalid.Error(),
	}, rm.now().UTC())
	return rm.writeStatus(ctx, st)
}

// syncDeleted removes every container of a deleted controller, then its
// status. Ownership is the replicationController label alone: the spec, and
// with it the selector, is gone.
func (rm *ReplicationManager) syncDeleted(ctx context.Context, id string) error {
	tasks, err := rm.taskControl.ListTasks(ctx, map[string]string{api.LabelController: id})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	if len(tasks) > 0 {
		rm.logger.Info("controller deleted: removing its containers", "controller", id, "actual", len(tasks))
	}
	if _, errs := rm.deleteTasks(ctx, tasks); len(errs) > 0 {
		return errors.Join(errs...)
	}
	return rm.forgetStatus(ctx, id)
}

// syncSpec is the diff of a valid spec: replace dead containers, create the
// missing ones, delete the extra ones, write the status.
func (rm *ReplicationManager) syncSpec(ctx context.Context, rev int64, rc *api.ReplicationController) error {
	id := rc.ID
	desired := rc.DesiredState.Replicas
	tasks, err := rm.taskControl.ListTasks(ctx, map[string]string{api.LabelController: id})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var active, inactive []api.Task
	for _, t := range tasks {
		switch {
		case !api.SelectorMatches(rc.DesiredState.ReplicasInSet, t.Labels):
			// ours by label but outside the selector: not counted, not touched
		case t.Active():
			active = append(active, t)
		default:
			inactive = append(inactive, t)
		}
	}

	st := rm.lastStatus(id)
	st.ObservedRevision = rev
	st.Conditions = clearCondition(st.Conditions, api.ConditionInvalidSpec)
	var failure *api.Condition

	// Dead containers hold their slot's name: remove them first so that
	// their slots can be filled again in this sync.
	var kept []api.Task
	if len(inactive) > 0 {
		rm.logger.Info("removing stopped containers", "controller", id, "count", len(inactive))
		deleted, errs := rm.deleteTasks(ctx, inactive)
		kept = withoutTasks(inactive, deleted) // these still hold their slots
		if len(errs) > 0 {
			failure = &api.Condition{Reason: api.ReasonDeleteFailed, Message: errs[0].Error()}
			err = errors.Join(errs...)
		}
	}

	switch diff := len(active) - desired; {
	case diff < 0:
		n := min(-diff, rm.opts.BurstReplicas)
		rm.logger.Info("too few replicas: creating", "controller", id, "desired", desired, "actual", len(active), "creating", n)
		created, errs := rm.createTasks(ctx, rc, freeSlots(append(kept, active...), n))
		active = append(active, created...)
		if len(errs) > 0 {
			failure = &api.Condition{Reason: api.ReasonCreateFailed, Message: errs[0].Error()}
			err = errors.Join(append([]error{err}, errs...)...)
		}
	case diff > 0:
		n := min(diff, rm.opts.BurstReplicas)
		rm.logger.Info("too many replicas: deleting", "controller", id, "desired", desired, "actual", len(active), "deleting", n)
		victims := rankForDeletion(active)[:n]
		deleted, errs := rm.deleteTasks(ctx, victims)
		active = withoutTasks(active, deleted)
		if len(errs) > 0 {
			failure = &api.Condition{Reason: api.ReasonDeleteFailed, Message: errs[0].Error()}
			err = errors.Join(append([]error{err}, errs...)...)
		}
	default:
		rm.logger.Debug("replicas as desired", "controller", id, "desired", desired, "actual", len(active))
	}

	now := rm.now().UTC()
	var nextAvailable time.Duration
	st.Replicas = len(active)
	st.ReadyReplicas, st.AvailableReplicas, nextAvailable = countReplicas(active, time.Duration(rc.DesiredState.MinReadySeconds)*time.Second, now)
	if failure != nil {
		failure.Type = api.ConditionReplicaFailure
		st.Conditions = setCondition(st.Conditions, *failure, now)
	} else {
		st.Conditions = clearCondition(st.Conditions, api.ConditionReplicaFailure)
	}
	if werr := rm.writeStatus(ctx, st); werr != nil {
		err = errors.Join(err, werr)
	}
	if err == nil && nextAvailable > 0 {
		rm.queue.AddAfter(id, nextAvailable) // count it as available on time
	}
	if err == nil && len(active) != desired {
		// capped by the burst limit: carry on at once, not at the resync
		rm.queue.Add(id)
	}
	return err
}

// createTasks creates one container per slot, in slow-start batches. It
// returns the containers created and the errors of the batch that failed.
func (rm *ReplicationManager) createTasks(ctx context.Context, rc *api.ReplicationController, slots []int) ([]api.Task, []error) {
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	container := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	created := make([]api.Task, len(slots))
	ok := make([]bool, len(slots))
	_, errs := slowStartBatch(len(slots), 1, func(i int) error {
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
			err := rm.taskControl.DeleteTask(ctx, t.ID)
			rm.metrics.countContainerOp("delete", err)
			if err != nil {
				results[i] = fmt.Errorf("delete %s: %w", t.Name, err)
				return
			}
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
