package main

// This file is what nodes shows of a node's labels: those of its
// --node-labels ("flag") and those of its config ("key"), which win on a
// clash, as the leader merges them for placement.

import (
	"maps"
	"slices"
	"strings"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// The sources of a label.
const (
	labelFromFlag = "flag"
	labelFromKey  = "key"
)

// labels returns the labels placement sees and where each comes from.
func (v *nodeView) labels() (map[string]string, map[string]string) {
	var registered map[string]string
	if v.node != nil {
		registered = v.node.Labels
	}
	merged := api.MergeNodeLabels(registered, v.config.Labels)
	if len(merged) == 0 {
		return nil, nil
	}
	from := make(map[string]string, len(merged))
	for k := range merged {
		from[k] = labelFromFlag
		if _, ok := v.config.Labels[k]; ok {
			from[k] = labelFromKey
		}
	}
	return merged, from
}

// labelsCell is the LABELS cell: k=v pairs in key order, those of the
// config marked "(key)".
func (v *nodeView) labelsCell() string {
	merged, from := v.labels()
	if len(merged) == 0 {
		return ctlview.None
	}
	pairs := make([]string, 0, len(merged))
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		p := k + "=" + merged[k]
		if from[k] == labelFromKey {
			p += "(key)"
		}
		pairs = append(pairs, p)
	}
	return strings.Join(pairs, ",")
}
