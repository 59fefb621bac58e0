package bench

// This file is the manager's side of the convergence. Every round applies
// a controller the daemon has never seen, with a template (and so a
// template hash) of its own: the 0→N timed is a first apply, the case
// where the manager knows nothing yet of the template or its image. The
// round's N→0 scales that controller to 0; the controller is deleted at
// the end of its round. The health part drives the manager the same way,
// with an image of its own.

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
	// hashes are the template hashes applied so far: each round's must
	// be new, or its 0→N would not be a first apply.
	hashes map[string]bool
}

// newControllerRounds returns the manager given a new controller of image
// each round, named name, its containers labelled label, its controllers
// rmbench-<run>-<idPart>-<round>.
func (e *dockerEnv) newControllerRounds(name, label, idPart, image string) *managerRounds {
	return &managerRounds{e: e, name: name, label: label, idPart: idPart, image: image,
		hashes: make(map[string]bool)}
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

// after deletes the round's controller, which has no container left.
func (m *managerRounds) after(ctx context.Context, round, _ int) error {
	id := m.id(round)
	if err := m.e.daemon.store.DeleteController(ctx, id); err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}
