// Package decide is the leader's one decision per controller: which slots
// exist, which node runs each and which template revision it runs. It is
// pure (no etcd, no Docker, no clock, no locks), so that the compiler
// keeps it so, and every count, placement and rollout step of the
// registry is made here and nowhere else.
package decide
