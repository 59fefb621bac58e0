package api

// This file is the first step of the ownership rule: which registry a
// container is of.

// OfRegistry is the first step of the ownership rule, for those who show
// containers (rcctl describe): whether a container with these labels may be
// of the registry registryID. One without the registry label was made
// before it existed and may be; so may every container when registryID is
// empty (a registry whose first manager has not started yet).
func OfRegistry(registryID string, labels map[string]string) bool {
	reg, ok := labels[LabelRegistry]
	return !ok || registryID == "" || reg == registryID
}
