package api

import "time"

// Revision is one template a controller ran, as the manager records it
// under /registry/history/controllers/<id>/<revision> when it first acts
// on it (docs/CONTRACT.md, Updates).
type Revision struct {
	// Number counts the controller's templates, 1 for its first, as
	// kubectl numbers a Deployment's revisions. A record written before
	// numbers were (none here) reads as numbered by its place in the
	// history: the store's list functions fill it (NumberRevisions).
	Number int64 `json:"number,omitempty"`
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

// NumberRevisions fills the Number of the records of one controller's
// history, oldest first, that have none: each reads one more than the
// record before it (the oldest 1), so history written before records
// were numbered reads 1, 2, 3 and a numbered record after it carries on.
func NumberRevisions(revs []Revision) {
	var last int64
	for i := range revs {
		if revs[i].Number == 0 {
			revs[i].Number = last + 1
		}
		last = revs[i].Number
	}
}
