package agent

// This file keeps one copy of each string the containers repeat. Every
// decode of an engine's answer (a list, an inspect) gives each container
// its own copy of every label key and value, of its image and of its
// state: after a restart, a node of 100,000 containers would hold each of
// them 100,000 times. The cache shares what a list, an inspect or a create
// brings (Docker's create answers with an inspect of the new container);
// an event's update keeps the labels the cache has.

import (
	"unique"

	"github.com/replication-manager/replication-manager/api"
)

// shared returns t with the strings containers repeat made the one copy
// of each: a new label map of shared keys and values (the map t came with
// is left as it is), its image, image ID, state and health.
func shared(t api.Task) api.Task {
	labels := make(map[string]string, len(t.Labels))
	for k, v := range t.Labels {
		labels[intern(k)] = intern(v)
	}
	t.Labels = labels
	t.Image, t.ImageID, t.State, t.Health = intern(t.Image), intern(t.ImageID), intern(t.State), intern(t.Health)
	return t
}

// intern is the one copy of s.
func intern(s string) string { return unique.Make(s).Value() }
