package main

// set image changes the image of containers of one controller's template,
// as kubectl set image does, in place of a get | sed | apply pipe. It
// writes the spec as apply does (registry.WriteControllers, under a
// compare of the ModRevision it read), and, being a change of named fields,
// on a conflict reads the spec again and makes the same change to it, as
// scale does. Everything else in the spec stays as it is; the manager then
// rolls the containers to the new template as it rolls any change.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

func (c *cli) setCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set",
		Short: "change one field of a controller's spec (set image)",
		Long: `Set changes one field of a controller's spec, as kubectl set does, and leaves
the rest as it is. rcctl set image ID CONTAINER=IMAGE sets the image of a
container of the template.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("set: unknown command %q (want image; see rcctl set -h)", args[0])
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return usageErrorf("set: name a command: image (see rcctl set -h)")
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.AddCommand(c.setImageCommand())
	return cmd
}

func (c *cli) setImageCommand() *cobra.Command {
	var dryRun bool
	var wait waitFlags
	cmd := &cobra.Command{
		Use:   "image ID CONTAINER=IMAGE [CONTAINER=IMAGE...]",
		Short: "set the image of containers of a controller's template",
		Long: `Set image sets the image of the named containers of the controller's task
template (desiredState.taskTemplate.desiredState.manifest.containers[].image),
as kubectl set image does; *=IMAGE sets every container's. Nothing else in the
spec changes, and the manager rolls the containers to the new template within
the spec's updateStrategy (follow it with rcctl rollout status ID, or --wait).
The spec is validated as apply validates it, and written only if nobody changed
it since it was read; if someone did, set image reads it again and makes the
same change (up to 3 times). An image that is already set writes nothing.

With --dry-run it prints what the registry would do to each container, and on
which node, and writes nothing.`,
		ValidArgsFunction: c.completeSetImage,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf("set image: want an ID and at least one CONTAINER=IMAGE, got %d argument(s)", len(args))
			}
			images, err := parseImageArgs(args[1:])
			if err != nil {
				return err
			}
			if dryRun && *wait.wait {
				return usageErrorf("set image: --dry-run writes nothing to wait for; drop --wait")
			}
			return c.setImage(cmd.Context(), args[0], images, dryRun, wait)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, dryRunHelp)
	wait = addWaitFlags(cmd.Flags())
	return cmd
}

// imageArg is one CONTAINER=IMAGE; container "*" is every container.
type imageArg struct {
	container, image string
}

// parseImageArgs reads the CONTAINER=IMAGE arguments, in order.
func parseImageArgs(args []string) ([]imageArg, error) {
	out := make([]imageArg, 0, len(args))
	seen := map[string]bool{}
	for _, a := range args {
		name, image, ok := strings.Cut(a, "=")
		switch {
		case !ok:
			return nil, usageErrorf("set image: %q is not CONTAINER=IMAGE", a)
		case name == "":
			return nil, usageErrorf("set image: %q names no container (want CONTAINER=IMAGE, or *=IMAGE for every container)", a)
		case strings.TrimSpace(image) == "":
			return nil, usageErrorf("set image: %q names no image", a)
		case seen[name]:
			return nil, usageErrorf("set image: container %q is given twice", name)
		}
		seen[name] = true
		out = append(out, imageArg{container: name, image: image})
	}
	return out, nil
}

// imageChange is one container whose image set image changes.
type imageChange struct {
	container, from, to string
}

// setImages sets the images of rc's containers and returns what changed,
// in the manifest's order; a container named that rc does not have is an
// error naming those it has.
func setImages(rc *api.ReplicationController, images []imageArg) ([]imageChange, error) {
	containers := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers
	var changes []imageChange
	for _, a := range images {
		if a.container == "*" {
			continue
		}
		if !slices.ContainsFunc(containers, func(ctr api.Container) bool { return ctr.Name == a.container }) {
			names := make([]string, len(containers))
			for i, ctr := range containers {
				names[i] = fmt.Sprintf("%q", ctr.Name)
			}
			return nil, fmt.Errorf("controller %q has no container %q (its containers: %s); nothing written", rc.ID, a.container, strings.Join(names, ", "))
		}
	}
	for i := range containers {
		ctr := &containers[i]
		image := ""
		for _, a := range images {
			switch {
			case a.container == ctr.Name:
				image = a.image // a name wins over *
			case a.container == "*" && image == "":
				image = a.image
			}
		}
		if image != "" && image != ctr.Image {
			changes = append(changes, imageChange{container: ctr.Name, from: ctr.Image, to: image})
			ctr.Image = image
		}
	}
	return changes, nil
}

// formatImageChanges is "web: demo-task:latest → demo-task:v2, ...", with
// the dry run's arrow.
func formatImageChanges(changes []imageChange) string {
	parts := make([]string, len(changes))
	for i, ch := range changes {
		parts[i] = fmt.Sprintf("%s: %s → %s", ch.container, ch.from, ch.to)
	}
	return strings.Join(parts, ", ")
}

func (c *cli) setImage(ctx context.Context, id string, images []imageArg, dryRun bool, wait waitFlags) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	for range scaleAttempts {
		spec, err := readForUpdate(ctx, cn, id)
		if err != nil {
			return err
		}
		// a copy to change: the stored spec is what the dry run compares with
		rc, err := copyController(spec.Controller)
		if err != nil {
			return fmt.Errorf("controller %q: %w", id, err)
		}
		changes, err := setImages(rc, images)
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			fmt.Fprintf(c.stdout, "controller %q unchanged: its images are as given; nothing written\n", id)
			return nil
		}
		if err := c.validate(ctx, cn, rc, id); err != nil {
			return invalid(id, "with the new image", err)
		}
		if dryRun {
			fmt.Fprintf(c.stdout, "controller %q image updated (%s) (dry run)\n", id, formatImageChanges(changes))
			return c.dryRun(ctx, cn, rc, &spec)
		}
		write := []registry.SpecWrite{{Controller: rc, ModRevision: spec.ModRevision}}
		_, err = call(ctx, cn, func(ctx context.Context) (int64, error) { return cn.store.WriteControllers(ctx, write) })
		var conflict *registry.ConflictError
		switch {
		case errors.As(err, &conflict) && len(conflict.Conflicts) == 1 && conflict.Conflicts[0].Now == 0:
			return fmt.Errorf("controller %q was deleted by someone else since it was read; nothing written", id)
		case errors.As(err, &conflict):
			continue // the same change to the newer spec
		case err != nil:
			return err
		}
		fmt.Fprintf(c.stdout, "controller %q image updated (%s)\n", id, formatImageChanges(changes))
		return c.waitAfterWrite(ctx, cn, id, wait)
	}
	return fmt.Errorf("controller %q was changed by someone else on each of %d attempts; gave up, nothing written", id, scaleAttempts)
}

// copyController is a deep copy of rc, through its encoding.
func copyController(rc *api.ReplicationController) (*api.ReplicationController, error) {
	data, err := api.Encode(rc)
	if err != nil {
		return nil, err
	}
	return api.Decode(data)
}
