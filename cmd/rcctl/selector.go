package main

// The -l selector of get: key=value pairs, comma-separated, that a
// controller's own labels (the spec's top-level "labels", as kubectl's -l
// matches an object's labels, not the selector it applies to its pods)
// must all contain. The syntax and the rules for keys and values are
// those of the daemon's --node-labels (api.ParseNodeLabels).

import (
	"github.com/replication-manager/replication-manager/api"
)

// selector is a parsed -l: every pair must be among a controller's labels.
// The zero selector matches every controller.
type selector map[string]string

// parseSelector reads -l of command; "" selects every controller.
func parseSelector(command, s string) (selector, error) {
	labels, err := api.ParseNodeLabels(s)
	if err != nil {
		return nil, usageErrorf("%s: -l: %v (want key=value[,key=value...])", command, oneLine(err))
	}
	if len(labels) == 0 {
		return nil, nil
	}
	return selector(labels), nil
}

// matches reports whether the controller's labels hold every pair. A spec
// that does not decode has no labels the selector can see: it matches only
// the empty selector.
func (s selector) matches(rc *api.ReplicationController) bool {
	if len(s) == 0 {
		return true
	}
	if rc == nil {
		return false
	}
	for k, v := range s {
		if got, ok := rc.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
