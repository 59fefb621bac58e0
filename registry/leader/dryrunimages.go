package leader

// This file adds to a dry run what each node would do about the images of
// the template it would create containers of (docs/CONTRACT.md, Images):
// pull them, or find them there, as far as the node's report on the
// controller knows. Pure, as the dry run is.

import (
	"slices"

	"github.com/replication-manager/replication-manager/api"
)

// What a node would do about an image (DryRunImage.Pull).
const (
	// DryRunPullAlways: imagePullPolicy Always pulls before each create.
	DryRunPullAlways = "would be pulled (imagePullPolicy Always)"
	// DryRunPullThere: a container the node reports runs the image.
	DryRunPullThere = "is there (a container of the controller runs it)"
	// DryRunPullPulling: the node reports a pull of it under way.
	DryRunPullPulling = "is being pulled"
	// DryRunPullIfMissing: the report does not say; pulled if missing.
	DryRunPullIfMissing = "would be pulled if the node lacks it"
	// DryRunPullNever: imagePullPolicy Never; it must be there.
	DryRunPullNever = "is never pulled (imagePullPolicy Never): it must be on the node"
)

// DryRunImage is what one node would do about one image.
type DryRunImage struct {
	Node, Image, Pull string
}

// dryRunImages says, for each node that creates, replaces or receives a
// container in steps, what it would do about each image of rc's template,
// from its report (before the dry run changed anything).
func dryRunImages(rc *api.ReplicationController, reports []api.NodeReport, steps []DryRunStep) []DryRunImage {
	var nodes []string
	for _, s := range steps {
		if s.Action != "remove" && !slices.Contains(nodes, s.Node) {
			nodes = append(nodes, s.Node)
		}
	}
	slices.Sort(nodes)
	var out []DryRunImage
	for _, node := range nodes {
		var report *api.NodeReport
		for i := range reports {
			if reports[i].Node == node {
				report = &reports[i]
			}
		}
		seen := map[string]bool{}
		for _, c := range rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers {
			if seen[c.Image] {
				continue
			}
			seen[c.Image] = true
			pull := DryRunPullIfMissing
			switch {
			case c.PullPolicy() == api.PullAlways:
				pull = DryRunPullAlways
			case c.PullPolicy() == api.PullNever:
				pull = DryRunPullNever
			case runsImage(report, c.Image):
				pull = DryRunPullThere
			case pullsImage(report, c.Image):
				pull = DryRunPullPulling
			}
			out = append(out, DryRunImage{Node: node, Image: c.Image, Pull: pull})
		}
	}
	return out
}

// runsImage reports whether a container of the report runs image.
func runsImage(r *api.NodeReport, image string) bool {
	if r == nil {
		return false
	}
	for _, t := range r.Tasks {
		if t.Image == image {
			return true
		}
		for _, p := range t.Parts {
			if p.Image == image {
				return true
			}
		}
	}
	return false
}

// pullsImage reports whether the report has a slot waiting for image.
func pullsImage(r *api.NodeReport, image string) bool {
	return r != nil && slices.ContainsFunc(r.Pulling, func(p api.PullingSlot) bool { return p.Image == image })
}
