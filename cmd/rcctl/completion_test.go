package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

func TestCompletionBashPrintsABashScript(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer

	err := run(t.Context(), []string{"completion", "bash"}, strings.NewReader(""), &stdout, &stderr)

	assertOK(t, result{stdout.String(), stderr.String(), err})
	assertContains(t, stdout.String(),
		"# bash completion V2 for rcctl",
		"__rcctl_get_completion_results()",
		"__complete",
		"complete -o default -F __start_rcctl rcctl")
}

func TestCompletionOfEveryShellPrintsAScript(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_rcctl rcctl",
		"zsh":        "#compdef rcctl",
		"fish":       "complete -c rcctl",
		"powershell": "Register-ArgumentCompleter",
	} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"completion", shell}, strings.NewReader(""), &stdout, &stderr)
			assertOK(t, result{stdout.String(), stderr.String(), err})
			assertContains(t, stdout.String(), want)
		})
	}
}

func TestCompletionWithoutAKnownShellIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "extra"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
			if got := exitCode(err); err == nil || got != 2 {
				t.Errorf("error %v, exit code %d; want a usage error, exit 2", err, got)
			}
		})
	}
}

// complete runs the hidden command the completion scripts call, as they
// call it, and returns the offered words and the directive line.
func complete(t *testing.T, args ...string) (words []string, directive string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), append([]string{"__complete"}, args...), strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatalf("rcctl __complete %q: %v\nstderr:\n%s", args, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// noFileComp is the directive line of cobra.ShellCompDirectiveNoFileComp.
const noFileComp = ":4"

func TestCompletionOffersTheControllerIDsInEtcd(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	for _, id := range []string{"web", "api", "worker"} {
		e.create(newController(id, 1))
	}
	etcd := []string{"--etcd-servers", e.etcd.ClientURL}

	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"describe", append(etcd, "describe", ""), []string{"api", "web", "worker"}},
		{"a prefix", append(etcd, "describe", "w"), []string{"web", "worker"}},
		{"the global flags after the command", []string{"scale", "--etcd-servers", e.etcd.ClientURL, "w"}, []string{"web", "worker"}},
		{"get", append(etcd, "get", ""), []string{"api", "web", "worker"}},
		{"delete", append(etcd, "delete", "a"), []string{"api"}},
		{"one ID only", append(etcd, "describe", "web", ""), nil},
		{"no match", append(etcd, "describe", "x"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			words, directive := complete(t, tt.args...)
			if !slices.Equal(words, tt.want) || directive != noFileComp {
				t.Errorf("completion %q, %q; want %q, %q", words, directive, tt.want, noFileComp)
			}
		})
	}
}

func TestCompletionOfIDsUsesTheRegistryPrefix(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 1))
	assertOK(t, e.run("", "--registry-prefix", "/other", "run", "hello", "--image", "demo-task:latest"))

	words, _ := complete(t, "--etcd-servers", e.etcd.ClientURL, "--registry-prefix", "/other", "describe", "")

	if want := []string{"hello"}; !slices.Equal(words, want) {
		t.Errorf("completion %q, want %q", words, want)
	}
}

func TestCompletionOfIDsOffersNothingQuicklyWhenEtcdDoesNotAnswer(t *testing.T) {
	t.Parallel()
	start := time.Now()

	words, directive := complete(t, "describe", "--etcd-servers", etcdtest.FreeAddr(t), "")

	if len(words) != 0 || directive != noFileComp {
		t.Errorf("completion %q, %q; want nothing, %q", words, directive, noFileComp)
	}
	if elapsed := time.Since(start); elapsed > completionTimeout+2*time.Second {
		t.Errorf("took %s, want about the %s completion timeout", elapsed, completionTimeout)
	}
}

func TestCompletionOffersCommandsAndOutputFormats(t *testing.T) {
	t.Parallel()
	words, _ := complete(t, "")
	var names []string
	for _, w := range words {
		name, _, _ := strings.Cut(w, "\t")
		names = append(names, name)
	}
	if want := []string{"apply", "get", "describe", "logs", "scale", "set", "rollout", "delete", "run", "nodes", "cordon", "uncordon", "drain", "label", "version", "completion", "help"}; !slices.Equal(names, want) {
		t.Errorf("commands offered %q, want %q", names, want)
	}

	words, directive := complete(t, "get", "-o", "")
	if want := []string{"wide", "json", "yaml", "name", "jsonpath="}; !slices.Equal(words, want) || directive != noFileComp {
		t.Errorf("get -o offers %q, %q; want %q, %q", words, directive, want, noFileComp)
	}
}

func TestCompletionOfRolloutOffersItsCommandsThenControllerIDs(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	for _, id := range []string{"web", "api", "worker"} {
		e.create(newController(id, 1))
	}
	etcd := []string{"--etcd-servers", e.etcd.ClientURL}

	words, _ := complete(t, "rollout", "")
	var names []string
	for _, w := range words {
		name, _, _ := strings.Cut(w, "\t")
		names = append(names, name)
	}
	if want := []string{"status", "history", "undo", "restart", "pause", "resume"}; !slices.Equal(names, want) {
		t.Errorf("rollout offers %q, want %q", names, want)
	}
	for _, sub := range []string{"status", "history", "undo", "restart", "pause", "resume"} {
		t.Run(sub, func(t *testing.T) {
			t.Parallel()
			words, directive := complete(t, append(etcd, "rollout", sub, "w")...)
			if want := []string{"web", "worker"}; !slices.Equal(words, want) || directive != noFileComp {
				t.Errorf("completion %q, %q; want %q, %q", words, directive, want, noFileComp)
			}
			if words, _ := complete(t, append(etcd, "rollout", sub, "web", "")...); len(words) != 0 {
				t.Errorf("after the ID: %q, want nothing", words)
			}
		})
	}
}
