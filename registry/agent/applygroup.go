package agent

// This file carries out the actions of a plan other than creates
// (create.go) on whole tasks: a task is renamed and removed with its
// parts, and its emptyDir volumes go with it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/replication-manager/replication-manager/api"
)

// renameTask renames t to name and, for a task of several containers, its
// parts to name.<container>, so that its successor can take the slot's
// names.
func (rm *Agent) renameTask(ctx context.Context, t api.Task, name string, group bool) error {
	if err := rm.taskControl.RenameTask(ctx, t.ID, name); err != nil || !group {
		return err
	}
	var errs []error
	for _, p := range rm.partsOf(t) {
		partName := name + "." + p.Labels[api.LabelContainer]
		if err := rm.taskControl.RenameTask(ctx, p.ID, partName); err != nil {
			errs = append(errs, fmt.Errorf("rename %s: %w", p.Name, err))
			continue
		}
		rm.tasks.renamed(p.ID, partName)
	}
	return errors.Join(errs...)
}

// deleteTask stops and removes t, its parts first (but those in listed,
// which go on their own), then its slot's emptyDir volumes. The parts stop
// together, each within its own grace period.
func (rm *Agent) deleteTask(ctx context.Context, t api.Task, listed map[string]bool) error {
	parts := slices.DeleteFunc(slices.Clone(rm.partsOf(t)), func(p api.Task) bool { return listed[p.ID] })
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { errs[i] = rm.deleteContainer(ctx, p) })
	}
	wg.Wait()
	if err := rm.deleteContainer(ctx, t); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if t.JoinedTo == "" && (holdsSlot(t.Labels[api.LabelController], t) || api.IsInit(t.Labels)) {
		errs = append(errs, rm.removeVolumes(ctx, rm.slotVolumes(t)))
	}
	return errors.Join(errs...)
}

// deleteContainer stops and removes one container.
func (rm *Agent) deleteContainer(ctx context.Context, t api.Task) error {
	err := recovered(func() error { return rm.taskControl.DeleteTask(ctx, t.ID) })
	if errors.Is(err, api.ErrPreStopFailed) {
		// stopped and removed all the same
		rm.logger.Warn("container's preStop failed", "controller", t.Labels[api.LabelController], "container", t.Name, "err", err)
		err = nil
	}
	rm.metrics.countContainerOp("delete", err)
	if err != nil {
		return fmt.Errorf("delete %s: %w", t.Name, err)
	}
	rm.tasks.deleted(t.ID, rm.now())
	rm.logger.Info("container deleted", "controller", t.Labels[api.LabelController], "container", t.Name)
	return nil
}

// partsOf returns the containers that joined t's network, from the cache.
func (rm *Agent) partsOf(t api.Task) []api.Task {
	return rm.partsIndex(t.Labels[api.LabelController])(t)
}

// partsIndex lists controller id's containers from the cache once and
// returns what partsOf would say of each of its tasks, for the callers
// that ask of every task (a report).
func (rm *Agent) partsIndex(id string) func(api.Task) []api.Task {
	var byFirst map[string][]api.Task
	rm.tasks.scan(id, func(partID string, p cachedTask) {
		if first := p.joinedTo(); first != "" {
			if byFirst == nil {
				byFirst = map[string][]api.Task{}
			}
			byFirst[first] = append(byFirst[first], p.task(partID))
		}
	})
	return func(t api.Task) []api.Task { return byFirst[t.ID] }
}

// slotVolumes are the emptyDir volumes of t's slot, as the newest spec
// declares them. Those of a template no longer in the spec stay until the
// controller goes (forgetVolumes).
func (rm *Agent) slotVolumes(t api.Task) []api.VolumeSpec {
	id := t.Labels[api.LabelController]
	spec, exists, _ := rm.specs.get(id)
	if !exists || spec.Controller == nil {
		return nil
	}
	m := &spec.Controller.DesiredState.TaskTemplate.DesiredState.Manifest
	return api.EmptyDirVolumes(id, slotOf(t), m, map[string]string{api.LabelController: id, api.LabelRegistry: rm.registryID})
}

// removeVolumes removes volumes that carry their labels. One that a
// container still mounts (the next task of the slot, started first) stays.
func (rm *Agent) removeVolumes(ctx context.Context, volumes []api.VolumeSpec) error {
	var errs []error
	for _, v := range volumes {
		err := rm.taskControl.RemoveVolume(ctx, v.Name, v.Labels)
		switch {
		case errors.Is(err, api.ErrVolumeInUse):
		case err != nil:
			errs = append(errs, fmt.Errorf("remove volume %s: %w", v.Name, err))
		default:
			rm.logger.Info("volume removed", "volume", v.Name)
		}
	}
	return errors.Join(errs...)
}

// forgetVolumes removes every volume of controller id that this registry
// made on this node: the controller is gone.
func (rm *Agent) forgetVolumes(ctx context.Context, id string) error {
	selector := map[string]string{api.LabelController: id, api.LabelRegistry: rm.registryID}
	volumes, err := rm.taskControl.ListVolumes(ctx, selector)
	if err != nil {
		return fmt.Errorf("list the volumes of %s: %w", id, err)
	}
	specs := make([]api.VolumeSpec, len(volumes))
	for i, v := range volumes {
		specs[i] = api.VolumeSpec{Name: v.Name, Labels: selector}
	}
	return rm.removeVolumes(ctx, specs)
}
