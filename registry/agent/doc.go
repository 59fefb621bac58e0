// Package agent is the node agent: it runs exactly the slots the leader
// assigns to its node, with the assigned template, on the node's Docker
// engine through the task control. It replaces a dead container of an
// assigned slot at once, with crash-loop backoff, removes the containers of
// slots no longer assigned, and reports its slots' containers under its
// lease. It never counts, ranks or places: that is the leader's. A sync
// reads in two places: plan.go decides (a pure function of the
// assignments, the containers, the record and the time) and apply.go
// carries the decision out.
package agent
