package bench

// This file is the manager's side of the convergence. Every round applies
// a controller the daemon has never seen, with a template (and so a
// template hash) of its own: the 0→N timed is a first apply, the case
// where the manager knows nothing yet of the template or its image. The
// round's N→0 scales that controller to 0. With --proven-template the
// same controller is then scaled 0→N→0 once more, now that the daemon
// has created its containers: the proven-template figure, without a
// target. The controller is deleted at the end of its round. The health
// part drives the manager the same way, with an image of its own and no
// proven-template scale.

import (
	"context"
	"fmt"

	"github.com/replication-manager/replication-manager/api"
)

// managerRounds is the manager as a convergence system.
type managerRounds struct {
	e *dockerEnv
	// name is the system's, in the progress lines; label is its
	// containers' system label; idPart names its controllers
	// (rmbench-<run>-<idPart>-<round>), of image.
	name, label, idPart, image string
	// res receives the proven-template scales, which only the
	// convergence part times (proven).
	res    *DockerResults
	proven bool
	// hashes are the template hashes applied so far: each round's must
	// be new, or its 0→N would not be a first apply.
	hashes map[string]bool
	// provenCalls are the daemon's Docker calls during the
	// proven-template scales, which the calls of a round leave out.
	provenCalls map[string]float64
}

// newManagerRounds returns the manager of the convergence part, which
// times the proven-template scales into res when proven.
func (e *dockerEnv) newManagerRounds(res *DockerResults, proven bool) *managerRounds {
	m := e.newControllerRounds("manager", "manager", "conv", e.image)
	m.res, m.proven = res, proven
	return m
}

// newControllerRounds returns the manager given a new controller of image
// each round, named name, its containers labelled label, its controllers
// rmbench-<run>-<idPart>-<round>.
func (e *dockerEnv) newControllerRounds(name, label, idPart, image string) *managerRounds {
	return &managerRounds{e: e, name: name, label: label, idPart: idPart, image: image,
		hashes: make(map[string]bool), provenCalls: make(map[string]float64)}
}

// id is the controller of a round.
func (m *managerRounds) id(round int) string {
	return fmt.Sprintf("rmbench-%s-%s-%d", m.e.runID, m.idPart, round+1)
}

// system returns the manager as the convergence loop drives it; its
// samples go where into says.
func (m *managerRounds) system() *system {
	return &system{
		name:   m.name,
		up:     m.apply,
		down:   func(ctx context.Context, round int) error { return setReplicas(ctx, m.e.daemon.store, m.id(round), 0) },
		match:  func(round int) func(dockerEvent) bool { return labelled(api.LabelController, m.id(round)) },
		after:  m.after,
		labels: m.e.runLabels(m.label),
	}
}

// apply writes the round's new controller with n replicas, as
// `rcctl apply` of a new controller does (Store.CreateController).
func (m *managerRounds) apply(ctx context.Context, round, n int) error {
	rc := newController(m.id(round), m.image, n, m.e.runLabels(m.label))
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	if m.hashes[hash] {
		return fmt.Errorf("controller %s: template %s was applied in an earlier round, so this would not be a first apply", rc.ID, hash)
	}
	m.hashes[hash] = true
	_, err := m.e.daemon.store.CreateController(ctx, rc)
	return err
}

// after times the proven-template scale when asked, then deletes the
// round's controller, which has no container left.
func (m *managerRounds) after(ctx context.Context, round, n int) error {
	id := m.id(round)
	if m.proven {
		if err := m.scaleProven(ctx, id, n); err != nil {
			return err
		}
	}
	if err := m.e.daemon.store.DeleteController(ctx, id); err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}

// scaleProven scales controller id 0→n and back to 0, as `rcctl scale`
// does, timing the 0→n, and counts the daemon's Docker calls meanwhile.
func (m *managerRounds) scaleProven(ctx context.Context, id string, n int) error {
	store := m.e.daemon.store
	match := labelled(api.LabelController, id)
	before, err := m.e.dockerCalls(ctx)
	if err != nil {
		return err
	}
	curve, err := m.e.timeCurve(ctx, func() error { return setReplicas(ctx, store, id, n) }, "start", n, match)
	if err != nil {
		return fmt.Errorf("proven template 0→%d: %w", n, err)
	}
	down, err := m.e.timeChange(ctx, func() error { return setReplicas(ctx, store, id, 0) }, "destroy", n, match)
	if err != nil {
		return fmt.Errorf("proven template %d→0: %w", n, err)
	}
	fmt.Fprintf(m.e.progress, "  manager, proven template: 0→%d %s, %d→0 %s\n", n, fmtDuration(curve[n-1]), n, fmtDuration(down))
	// after the settle, so that the calls the scale's events cause are
	// its own
	if err := m.e.settle(ctx, m.e.runLabels(m.label)); err != nil {
		return err
	}
	after, err := m.e.dockerCalls(ctx)
	if err != nil {
		return err
	}
	for op, v := range after {
		m.provenCalls[op] += v - before[op]
	}
	m.res.ManagerProvenUp = append(m.res.ManagerProvenUp, curve[n-1])
	m.res.ManagerProvenCurves = append(m.res.ManagerProvenCurves, curve)
	return nil
}
