package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/internal/version"
)

func TestVersionPrintsTheBuildLineWithoutEtcd(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	// a flag validate would refuse: version neither checks nor connects
	err := run(t.Context(), []string{"--etcd-dial-timeout", "0s", "version"}, strings.NewReader(""), &stdout, &stderr)

	r := result{stdout.String(), stderr.String(), err}
	assertStdout(t, r, version.String("rcctl")+"\n")
	if !strings.HasPrefix(r.stdout, "rcctl (devel)") {
		t.Errorf("stdout %q, want it to start with %q (a test binary's module version)", r.stdout, "rcctl (devel)")
	}
}

func TestVersionRefusesArguments(t *testing.T) {
	t.Parallel()
	r := runOffline(t, "version", "extra")

	assertFails(t, r, `version: takes no arguments, got "extra"`)
	if exitCode(r.err) != 2 {
		t.Errorf("exit code %d, want 2", exitCode(r.err))
	}
}
