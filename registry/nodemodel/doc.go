// Package nodemodel is the one model of what a node does with its
// assignments for a controller: which of its containers it keeps,
// replaces, renames out of their slot's name and removes, and which slots
// it creates, within its burst limit. The node agent carries it out on
// its engine (registry/agent), and the leader's dry run plays it on the
// nodes' reports (registry/leader), so the two cannot drift apart. It
// never counts, ranks or trims: that is the leader's (registry/decide).
// Pure: no I/O, no clock, no locks.
package nodemodel
