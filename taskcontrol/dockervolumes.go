package taskcontrol

// This file manages named Docker volumes, the emptyDirs of tasks: it
// creates labelled ones, lists them by label and removes them, and it never
// removes a volume that lacks the labels its caller owns.

import (
	"context"
	"fmt"
	"maps"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/replication-manager/replication-manager/api"
)

// CreateVolume creates a named volume of the local driver with spec's
// labels. Docker's create of a name that exists returns the existing volume
// unchanged: when that volume carries every label of spec, it is returned
// as if created (a retried create is not an error); when it does not, it
// is someone else's and the error wraps api.ErrVolumeNameConflict.
func (d *Docker) CreateVolume(ctx context.Context, spec api.VolumeSpec) (api.NamedVolume, error) {
	v, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: spec.Name, Labels: maps.Clone(spec.Labels)})
	if err != nil {
		return api.NamedVolume{}, fmt.Errorf("create volume %s: %w", spec.Name, err)
	}
	if !matches(v.Labels, spec.Labels) {
		return api.NamedVolume{}, fmt.Errorf("create volume %s: %w", spec.Name, api.ErrVolumeNameConflict)
	}
	return namedVolume(v), nil
}

// ListVolumes returns the volumes whose labels contain every pair of
// selector (every volume when selector is empty); a value of
// api.AnyLabelValue matches any value of its key.
func (d *Docker) ListVolumes(ctx context.Context, selector map[string]string) ([]api.NamedVolume, error) {
	args := filters.NewArgs()
	for k, v := range selector {
		if v == api.AnyLabelValue {
			args.Add("label", k)
			continue
		}
		args.Add("label", k+"="+v)
	}
	resp, err := d.cli.VolumeList(ctx, volume.ListOptions{Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	out := make([]api.NamedVolume, 0, len(resp.Volumes))
	for _, v := range resp.Volumes {
		if v != nil {
			out = append(out, namedVolume(*v))
		}
	}
	return out, nil
}

// RemoveVolume removes the named volume if its labels contain every pair
// of selector, which must not be empty: a volume without the caller's
// labels (another registry's, a person's) gives an error wrapping
// api.ErrVolumeNotOwned and stays. A volume that is gone is not an error;
// one that a container (in any state) mounts gives an error wrapping
// api.ErrVolumeInUse. The labels are read just before the removal; a
// volume removed and made again by someone else in between is not told
// apart.
func (d *Docker) RemoveVolume(ctx context.Context, name string, selector map[string]string) error {
	if len(selector) == 0 {
		return fmt.Errorf("remove volume %s: refused without a selector of the labels it must carry", name)
	}
	v, err := d.cli.VolumeInspect(ctx, name)
	switch {
	case cerrdefs.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("remove volume %s: %w", name, err)
	case !matches(v.Labels, selector):
		return fmt.Errorf("remove volume %s: %w", name, api.ErrVolumeNotOwned)
	}
	err = d.cli.VolumeRemove(ctx, name, false)
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("remove volume %s: %w (%w)", name, api.ErrVolumeInUse, err)
	default:
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
}

// namedVolume maps the engine's volume; its CreatedAt is RFC 3339.
func namedVolume(v volume.Volume) api.NamedVolume {
	return api.NamedVolume{Name: v.Name, Labels: v.Labels, Created: parseTime(v.CreatedAt)}
}
