package main

import (
	"testing"
)

func TestAMistypedCommandGetsCobrasSuggestions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"gte"}, `unknown command "gte"; did you mean "get"? (see rcctl help)`},
		{[]string{"descrbe", "web"}, `unknown command "descrbe"; did you mean "describe"? (see rcctl help)`},
		{[]string{"nods", "--bogus"}, `unknown command "nods"; did you mean "logs" or "nodes"? (see rcctl help)`},
		{[]string{"help", "scael"}, `unknown command "scael"; did you mean "scale"? (see rcctl help)`},
		{[]string{"undo", "web"}, `unknown command "undo"; did you mean "rollout"? (see rcctl help)`},
		{[]string{"rollout", "stats", "web"}, `rollout: unknown command "stats"; did you mean "status"? (see rcctl rollout -h)`},
		// nothing close: no suggestion, the list of what there is
		{[]string{"frobnicate"}, `unknown command "frobnicate" (see rcctl help)`},
		{[]string{"rollout", "frob"}, `rollout: unknown command "frob" (want status, history, undo, restart, pause or resume; see rcctl rollout -h)`},
	} {
		r := runOffline(t, tt.args...)
		if r.err == nil || r.err.Error() != tt.want || exitCode(r.err) != 2 {
			t.Errorf("%q: error %v, want a usage error %q", tt.args, r.err, tt.want)
		}
	}
}
