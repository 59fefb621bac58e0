package api

import "time"

// Revision is one template a controller ran, as the manager records it
// under /registry/history/controllers/<id>/<revision> when it first acts
// on it (docs/CONTRACT.md, Updates).
type Revision struct {
	// Revision is the ModRevision of the spec that brought the template.
	Revision int64 `json:"revision"`
	// FirstSeen is when the manager first acted on it.
	FirstSeen time.Time `json:"firstSeen"`
	// TemplateHash is the template's hash, as on its containers.
	TemplateHash string       `json:"templateHash"`
	TaskTemplate TaskTemplate `json:"taskTemplate"`
}

// Image is the image of the revision's container.
func (r *Revision) Image() string {
	if cs := r.TaskTemplate.DesiredState.Manifest.Containers; len(cs) > 0 {
		return cs[0].Image
	}
	return ""
}
