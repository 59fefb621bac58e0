package taskcontrol

// This file is the in-memory fake's named volumes: created, listed and
// removed as on Docker, including what Docker does that a caller must
// cope with: a create of an existing name returns that volume, a mount of
// a missing volume creates it, and a mounted volume cannot be removed.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// fakeVolume is one named volume; its labels never change once made.
type fakeVolume struct {
	api.NamedVolume
}

// CreateVolume creates a volume named spec.Name with its labels. A volume
// of that name that carries every label of spec is returned as it is; one
// that does not gives an error wrapping api.ErrVolumeNameConflict.
func (f *Fake) CreateVolume(ctx context.Context, spec api.VolumeSpec) (api.NamedVolume, error) {
	f.record(&f.counts.VolumeCreate, "volume-create "+spec.Name)
	createErr := f.CreateVolumeErr
	if err := ctx.Err(); err != nil {
		return api.NamedVolume{}, fmt.Errorf("create volume %s: %w", spec.Name, err)
	}
	if createErr != nil {
		if err := createErr(spec); err != nil {
			return api.NamedVolume{}, fmt.Errorf("create volume %s: %w", spec.Name, err)
		}
	}

	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.volumeLocked(spec.Name, spec.Labels, now)
	if !matches(v.Labels, spec.Labels) {
		return api.NamedVolume{}, fmt.Errorf("create volume %s: %w", spec.Name, api.ErrVolumeNameConflict)
	}
	return v.copy(), nil
}

// ListVolumes returns the volumes whose labels contain every pair of
// selector, sorted by name.
func (f *Fake) ListVolumes(ctx context.Context, selector map[string]string) ([]api.NamedVolume, error) {
	f.record(&f.counts.VolumeList, "volume-list")
	listErr := f.ListVolumesErr
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	if listErr != nil {
		if err := listErr(); err != nil {
			return nil, fmt.Errorf("list volumes: %w", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []api.NamedVolume
	for _, v := range f.volumes {
		if matches(v.Labels, selector) {
			out = append(out, v.copy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RemoveVolume removes a volume whose labels contain every pair of
// selector, which must not be empty. A volume that is gone is not an
// error; one without those labels gives an error wrapping
// api.ErrVolumeNotOwned, one that a container mounts (in any state) one
// wrapping api.ErrVolumeInUse, and both stay.
func (f *Fake) RemoveVolume(ctx context.Context, name string, selector map[string]string) error {
	f.record(&f.counts.VolumeRemove, "volume-remove "+name)
	removeErr := f.RemoveVolumeErr
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	if len(selector) == 0 {
		return fmt.Errorf("remove volume %s: refused without a selector of the labels it must carry", name)
	}
	if removeErr != nil {
		if err := removeErr(name); err != nil {
			return fmt.Errorf("remove volume %s: %w", name, err)
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.volumes[name]
	switch {
	case !ok:
		return nil
	case !matches(v.Labels, selector):
		return fmt.Errorf("remove volume %s: %w", name, api.ErrVolumeNotOwned)
	}
	var users []string
	for _, t := range f.byID {
		if slices.Contains(t.volumes, name) {
			users = append(users, t.Name)
		}
	}
	if len(users) > 0 {
		sort.Strings(users)
		return fmt.Errorf("remove volume %s: %w by %v", name, api.ErrVolumeInUse, users)
	}
	delete(f.volumes, name)
	return nil
}

// AddVolume inserts a volume as if someone had made it by hand (another
// registry, a person), with the labels given. It is not recorded as a
// call, and it fails when the name is taken.
func (f *Fake) AddVolume(spec api.VolumeSpec) error {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, taken := f.volumes[spec.Name]; taken {
		return fmt.Errorf("add volume %s: %w", spec.Name, api.ErrVolumeNameConflict)
	}
	f.volumeLocked(spec.Name, spec.Labels, now)
	return nil
}

// Volumes returns every volume, sorted by name.
func (f *Fake) Volumes() []api.NamedVolume {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]api.NamedVolume, 0, len(f.volumes))
	for _, v := range f.volumes {
		out = append(out, v.copy())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Mounts returns the names of the volumes a container (by id or name)
// mounts, in the order of its spec's mounts; nil when it mounts none or
// does not exist.
func (f *Fake) Mounts(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	if !ok {
		t, ok = f.byName[id]
	}
	if !ok {
		return nil
	}
	return slices.Clone(t.volumes)
}

// volumeLocked returns the volume of that name, creating it with labels
// when it is missing; f.mu must be held.
func (f *Fake) volumeLocked(name string, labels map[string]string, now time.Time) *fakeVolume {
	if f.volumes == nil {
		f.volumes = make(map[string]*fakeVolume)
	}
	v, ok := f.volumes[name]
	if !ok {
		v = &fakeVolume{api.NamedVolume{Name: name, Labels: maps.Clone(labels), Created: now}}
		if v.Labels == nil {
			v.Labels = map[string]string{}
		}
		f.volumes[name] = v
	}
	return v
}

// mountVolumesLocked creates the missing volumes of a container's mounts,
// as Docker does when it creates the container, and returns the names of
// the named volumes it mounts; f.mu must be held.
func (f *Fake) mountVolumesLocked(mounts []api.Mount, now time.Time) []string {
	var names []string
	for _, m := range mounts {
		if m.Type != api.MountVolume {
			continue
		}
		f.volumeLocked(m.Source, m.VolumeLabels, now)
		names = append(names, m.Source)
	}
	return names
}

// copy returns the volume with its own labels map.
func (v *fakeVolume) copy() api.NamedVolume {
	out := v.NamedVolume
	out.Labels = maps.Clone(v.Labels)
	return out
}
