package leader

// This file is what the leader tells of the images a controller's
// containers run (docs/CONTRACT.md, Images): the images summed over the
// nodes' reports (the status's Images), and the condition ImageDrift when
// containers of one template run different image IDs, as when a tag moved
// between two creates. It is pure; a report's containers are grouped
// once, when the report comes (leaderreport.go), so that a merge costs a
// few groups per node rather than a pass over every container.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unique"

	"github.com/replication-manager/replication-manager/api"
)

// imageGroup is the containers of one report that share a template, a
// container of it and an image ID: the first containers of tasks have
// container "", the others their name in the template.
type imageGroup struct {
	hash, container, image, id, digest unique.Handle[string]
	// slots are the slots of the containers, one per container (0 for a
	// container without a slot), in the report's order.
	slots []int
}

// imageGroups groups a report's containers, leaving out those whose image
// ID the report does not tell (a node from before image IDs).
func imageGroups(tasks []api.ReportedTask) []imageGroup {
	var groups []imageGroup
	add := func(hash, container, image, id, digest string, slot int) {
		if id == "" {
			return
		}
		g := imageGroup{hash: unique.Make(hash), container: unique.Make(container), image: unique.Make(image), id: unique.Make(id)}
		i := slices.IndexFunc(groups, func(o imageGroup) bool {
			return o.hash == g.hash && o.container == g.container && o.image == g.image && o.id == g.id
		})
		if i < 0 {
			g.digest = unique.Make(digest)
			groups = append(groups, g)
			i = len(groups) - 1
		} else if groups[i].digest.Value() == "" {
			groups[i].digest = unique.Make(digest)
		}
		groups[i].slots = append(groups[i].slots, slot)
	}
	for _, t := range tasks {
		add(t.TemplateHash, "", t.Image, t.ImageID, t.RepoDigest, t.Slot)
		for _, p := range t.Parts {
			add(t.TemplateHash, p.Container, p.Image, p.ImageID, p.RepoDigest, t.Slot)
		}
	}
	return groups
}

// runningImages sums the groups of every node into the status's Images:
// one per image reference and image ID, with the repo digest a node
// knows, in the order of the references, then of the IDs.
func runningImages(groups []imageGroup) []api.RunningImage {
	type key struct{ image, id unique.Handle[string] }
	byKey := map[key]*api.RunningImage{}
	for _, g := range groups {
		k := key{g.image, g.id}
		ri := byKey[k]
		if ri == nil {
			ri = &api.RunningImage{Image: g.image.Value(), ImageID: g.id.Value()}
			byKey[k] = ri
		}
		ri.RepoDigest = cmp.Or(ri.RepoDigest, g.digest.Value())
		ri.Containers += len(g.slots)
	}
	if len(byKey) == 0 {
		return nil
	}
	out := make([]api.RunningImage, 0, len(byKey))
	for _, ri := range byKey {
		out = append(out, *ri)
	}
	slices.SortFunc(out, func(a, b api.RunningImage) int {
		return cmp.Or(strings.Compare(a.Image, b.Image), strings.Compare(a.ImageID, b.ImageID))
	})
	return out
}

// imageDrift is the message of ImageDrift: for each template, and
// container of it, whose containers run more than one image ID, each ID
// with the slots that run it; "" when there is no such template.
// Templates are named by their hash, in order, and the IDs in the order
// of their first slot.
func imageDrift(groups []imageGroup) string {
	if !slices.ContainsFunc(groups, func(g imageGroup) bool { return g.id != groups[0].id }) {
		return "" // one image for all, as nearly always: no need to group
	}
	type key struct{ hash, container unique.Handle[string] }
	ids := map[key]map[unique.Handle[string]][]int{}
	for _, g := range groups {
		if g.hash.Value() == "" {
			continue // no template to compare with
		}
		k := key{g.hash, g.container}
		if ids[k] == nil {
			ids[k] = map[unique.Handle[string]][]int{}
		}
		ids[k][g.id] = append(ids[k][g.id], g.slots...)
	}
	keys := slices.SortedFunc(maps.Keys(ids), func(a, b key) int {
		return cmp.Or(strings.Compare(a.hash.Value(), b.hash.Value()), strings.Compare(a.container.Value(), b.container.Value()))
	})
	var parts []string
	for _, k := range keys {
		if len(ids[k]) < 2 {
			continue
		}
		what := "template " + k.hash.Value()
		if c := k.container.Value(); c != "" {
			what += " container " + c
		}
		type run struct {
			id    string
			slots []int
		}
		var runs []run
		for id, slots := range ids[k] {
			slices.Sort(slots)
			runs = append(runs, run{id.Value(), slices.Compact(slots)})
		}
		slices.SortFunc(runs, func(a, b run) int { return cmp.Or(cmp.Compare(a.slots[0], b.slots[0]), strings.Compare(a.id, b.id)) })
		each := make([]string, len(runs))
		for i, r := range runs {
			each[i] = fmt.Sprintf("%s in slot(s) %s", r.id, joinInts(r.slots))
		}
		parts = append(parts, what+" runs "+strings.Join(each, " and "))
	}
	return strings.Join(parts, "; ")
}
