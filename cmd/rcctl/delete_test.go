package main

import "testing"

func TestDeleteRemovesController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	e.create(newController("api", 1))

	r := e.run("", "delete", "web")

	assertStdout(t, r, "controller \"web\" deleted (its containers will be removed by the manager)\n")
	assertNotFound(t, e, "web")
	e.get("api") // the other one stays
}

func TestDeleteUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "delete", "nope")

	assertFails(t, r, `controller "nope" not found`)
	if got := exitCode(r.err); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
}
