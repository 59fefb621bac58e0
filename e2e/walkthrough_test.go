package e2e

// The README's "Five minutes with rcctl" is a test: its commands run
// verbatim, in order, in a shell, against the daemon `make run` starts
// (built by the Makefile, with the image it builds), each checked against
// what the README says it shows. The expectations are a table in README
// order, keyed by each command's text: a README change to a command fails
// here naming it, until its row is changed too.
//
// The commands name fixed controllers (web, web-probed, hello, hello2) and
// an image tag (demo-task:v2), which are host-wide names in Docker: one
// walkthrough runs on a host at a time (a lock file), and it refuses to
// start while a container of those names exists that is not its own.
// Everything it makes is removed by the daemon's registry id label, pass or
// fail.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/volume"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/registrytest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
)

// walkStep is what the README says of one of its commands.
type walkStep struct {
	command string // the README's command, without its comment

	exit   int      // its exit status
	stdout []string // regular expressions its stdout matches, each
	stderr []string // and its stderr
	absent []string // regular expressions its stdout does not match

	// within, for a command that only reads, is how long it may take the
	// manager to get there: the command runs again until it shows what it
	// should, as a reader would run it again.
	within time.Duration
	// timeout bounds one run (default defaultStepTimeout).
	timeout time.Duration
	// interrupt, for a command that runs until Ctrl-C, is when it gets
	// its SIGINT.
	interrupt time.Duration
	// after are what the README says holds once the command is done,
	// without a command of its own to show it.
	after []walkCheck

	// waitsFor names the change of issue 31 on another branch that this
	// row's expectations need; empty when main has everything it checks.
	waitsFor string
}

// walkCheck is a command of the test's own (not the README's), run until
// its stdout matches.
type walkCheck struct {
	command string
	stdout  string
	within  time.Duration
}

const defaultStepTimeout = 60 * time.Second

// Branches of issue 31 that expectations below wait for.
const (
	waitsStatusColumn   = "the STATUS column of rcctl get"
	waitsRevisionNumber = "revisions numbered 1, 2, 3 per controller (describe, rollout history, undo)"
	waitsSetImage       = "rcctl set image"
	waitsSidecarNoCrash = "a removed sidecar is no crash"
	waitsHealthPort     = "the demo image's health check probes the port the task listens on"
	waitsReplicasField  = "the bad spec's error names desiredState.replicas"
	waitsJSONPathNL     = "jsonpath output ends with a newline"
	waitsScaleReason    = "condition reasons fit the cause (a scale is no RollingUpdate)"
)

// walkthrough is the README's "Five minutes with rcctl", command by command.
var walkthrough = []walkStep{
	{
		command: "bin/rcctl apply -f api/testdata/controller-web.json --wait",
		stdout:  []string{`controller "web" created`},
		timeout: 2 * time.Minute,
	},
	{
		command:  "bin/rcctl get",
		stdout:   []string{`(?m)^ID +DESIRED +CURRENT +READY +UP-TO-DATE +.*STATUS`, `(?m)^web +3 +3 +3 +3 `},
		within:   15 * time.Second,
		waitsFor: waitsStatusColumn,
	},
	{
		command: "docker ps --filter label=replicationController=web",
		stdout:  []string{`web-1\n`, `web-2\n`, `web-3\n`},
		absent:  []string{`web-4`},
		within:  15 * time.Second,
	},
	{
		command: "bin/rcctl scale web --replicas 5 --wait",
		stdout:  []string{`controller "web" scaled`},
		timeout: 2 * time.Minute,
	},
	{
		command: "docker rm -f web-2",
		stdout:  []string{`^web-2\n$`},
	},
	{
		command: "docker ps --filter label=replicationController=web",
		stdout:  []string{`Up [^\n]*web-2\n`, `web-1\n`, `web-3\n`, `web-4\n`, `web-5\n`},
		within:  20 * time.Second,
	},
	{
		command:  "bin/rcctl describe web",
		stdout:   []string{`(?m)^Revision: +1 \(the spec is at etcd revision \d+\)$`, `(?m)^ +web-5 `, `created 1 container\(s\): web-2`},
		absent:   []string{`(?m)^ +Progressing +\S+ +RollingUpdate `},
		waitsFor: waitsRevisionNumber + "; " + waitsScaleReason,
	},
	{
		command: "bin/rcctl nodes",
		stdout:  []string{`(?m)^NAME +STATUS`, `(?m)^\S+ +Ready `},
	},
	{
		command: "bin/rcctl nodes -o wide",
		stdout:  []string{`(?m)^\S+ +Ready `},
	},
	{
		command: "docker tag demo-task:latest demo-task:v2",
	},
	{
		command: "bin/rcctl set image web web=demo-task:v2 --dry-run",
		stdout: []string{`controller "web" image updated .*\(dry run\)`,
			`(?m)^web-1: would be replaced on `, `(?m)^web-2: would be replaced on `, `(?m)^web-3: would be replaced on `,
			`(?m)^web-4: would be replaced on `, `(?m)^web-5: would be replaced on `, `5 to replace \(nothing written\)`},
		waitsFor: waitsSetImage,
	},
	{
		command:  "bin/rcctl set image web web=demo-task:v2",
		stdout:   []string{`^controller "web" image updated \(web: demo-task:latest → demo-task:v2\)\n$`},
		waitsFor: waitsSetImage,
	},
	{
		command: "bin/rcctl rollout status web",
		stdout:  []string{`rollout of web complete`},
		timeout: 3 * time.Minute,
	},
	{
		command:  "bin/rcctl get",
		stdout:   []string{`(?m)^web +5 +5 +5 +5 .*demo-task:v2`},
		within:   30 * time.Second,
		waitsFor: waitsSetImage + " (the rollout to v2)",
	},
	{
		command:  "bin/rcctl rollout history web",
		stdout:   []string{`(?m)^ *REVISION`, `(?m)^ *1 +.*demo-task:latest`, `(?m)^\*? *2 +.*demo-task:v2`},
		waitsFor: waitsRevisionNumber + "; " + waitsSetImage,
	},
	{
		command:  "bin/rcctl rollout undo web",
		stdout:   []string{`^web rolled back to revision 1\n$`},
		waitsFor: waitsRevisionNumber + "; " + waitsSetImage,
	},
	{
		command: "bin/rcctl rollout restart web",
		stdout:  []string{`^web restarted\n$`},
	},
	{
		command: "bin/rcctl rollout pause web",
		stdout:  []string{`^web paused\n$`},
	},
	{
		command: "bin/rcctl rollout resume web",
		stdout:  []string{`^web resumed\n$`},
	},
	{
		command: "bin/rcctl rollout status web",
		stdout:  []string{`rollout of web complete`},
		timeout: 3 * time.Minute,
	},
	{
		command: "bin/rcctl scale web --replicas 2 --dry-run",
		stdout:  []string{`web-3: would be removed`, `web-4: would be removed`, `web-5: would be removed`, `nothing written`},
		absent:  []string{`web-1:`, `web-2:`},
	},
	{
		command: "bin/rcctl apply -f api/testdata/controller-sidecar.json --wait",
		stdout:  []string{`controller "web-probed" created`},
		timeout: 2 * time.Minute,
	},
	{
		command: "docker ps --filter label=replicationController=web-probed",
		stdout:  []string{`web-probed-1\n`, `web-probed-1\.prober\n`, `web-probed-2\n`, `web-probed-2\.prober\n`},
	},
	{
		command: "docker rm -f web-probed-1.prober",
		stdout:  []string{`^web-probed-1\.prober\n$`},
	},
	{
		// the whole slot comes back, and a removed sidecar is no crash
		command:  "bin/rcctl describe web-probed",
		stdout:   []string{`(?m)^ +web-probed-1\.prober +\S+ +1 +running `, `created 1 container\(s\): web-probed-1\b`},
		absent:   []string{`CrashLoop +True`, `Crashed`},
		within:   30 * time.Second,
		waitsFor: waitsSidecarNoCrash,
	},
	{
		command: "bin/rcctl delete web-probed",
		stdout:  []string{`^controller "web-probed" deleted`},
		after:   []walkCheck{{command: "docker ps -a --filter label=replicationController=web-probed -q", stdout: `^$`, within: 30 * time.Second}},
	},
	{
		command: "bin/rcctl run hello --image demo-task:latest --replicas 2",
		stdout:  []string{`controller "hello" created`},
	},
	{
		command:  "bin/rcctl run hello2 --image demo-task:latest -- /task --listen :8081",
		stdout:   []string{`controller "hello2" created`},
		after:    []walkCheck{{command: "bin/rcctl get hello2 -o jsonpath='{.currentState.readyReplicas}'", stdout: `^1\n?$`, within: 30 * time.Second}},
		waitsFor: waitsHealthPort,
	},
	{
		command:  `echo '{"id":"bad","desiredState":{"replicas":-1}}' | bin/rcctl apply -f -`,
		exit:     1,
		stderr:   []string{`desiredState\.replicas\b`},
		waitsFor: waitsReplicasField,
	},
	{
		command: "bin/rcctl run exposed --image demo-task:latest --port 8080:8080",
		exit:    1,
		stderr:  []string{`--allow-host-ports`},
	},
	{
		command:  "bin/rcctl get web -o jsonpath='{.currentState.readyReplicas}'",
		stdout:   []string{`^5\n$`},
		within:   30 * time.Second,
		waitsFor: waitsJSONPathNL,
	},
	{
		command: "bin/rcctl get -l name=web -o name",
		stdout:  []string{`^controller/web\n$`},
	},
	{
		command: "bin/rcctl get web -o json | bin/rcctl apply -f -",
		stdout:  []string{`^controller "web" unchanged\n$`},
	},
	{
		command: "bin/rcctl nodes -o yaml",
		stdout:  []string{`(?m)^items:`, `state: Ready`},
	},
	{
		command:  "bin/rcctl rollout history web -o jsonpath='{.items[?(@.current==true)].number}'",
		stdout:   []string{`^\d+\n$`},
		waitsFor: waitsRevisionNumber + "; " + waitsJSONPathNL,
	},
	{
		command:   "bin/rcctl get -w",
		interrupt: 3 * time.Second,
		stdout:    []string{`(?m)^ID +DESIRED`, `(?m)^web +5 `, `(?m)^hello +2 `, `(?m)^hello2 +1 `},
	},
	{
		command: "bin/rcctl logs web/1 --tail 5",
		stdout:  []string{`listening on \S+:8080`},
	},
	{command: "docker tag demo-task:latest 127.0.0.1:5000/demo-task:1"},
	{
		command: "docker push 127.0.0.1:5000/demo-task:1",
		stdout:  []string{`digest: sha256:[0-9a-f]{64}`},
	},
	{
		command: "docker rmi 127.0.0.1:5000/demo-task:1",
		stdout:  []string{`Untagged: 127\.0\.0\.1:5000/demo-task:1`},
	},
	{
		command: "bin/rcctl run pulled --image 127.0.0.1:5000/demo-task:1 --replicas 2 --wait",
		stdout:  []string{`controller "pulled" created`},
		timeout: 2 * time.Minute,
	},
	{
		command: "bin/rcctl describe pulled",
		stdout:  []string{`(?m)Pulled +pulled image 127\.0\.0\.1:5000/demo-task:1 in `},
	},
	{
		command: "bin/rcctl delete pulled",
		stdout:  []string{`^controller "pulled" deleted`},
	},
	{
		command: "bin/rcctl delete web",
		stdout:  []string{`^controller "web" deleted`},
	},
	{
		command: "bin/rcctl delete hello",
		stdout:  []string{`^controller "hello" deleted`},
	},
	{
		command: "bin/rcctl delete hello2",
		stdout:  []string{`^controller "hello2" deleted`},
		after:   []walkCheck{{command: "docker ps -a -q --filter label=replicationController.registry=$WALKTHROUGH_REGISTRY_ID", stdout: `^$`, within: 30 * time.Second}},
	},
	{
		command: "docker rmi demo-task:v2",
		stdout:  []string{`Untagged: demo-task:v2`},
	},
}

// walkthroughSection is the README's heading of the walkthrough.
const walkthroughSection = "Five minutes with rcctl"

// walkthroughIDs are the controllers the walkthrough makes, whose
// container names are taken host-wide while it runs.
var walkthroughIDs = []string{"web", "web-probed", "hello", "hello2", "pulled"}

// walkthroughTags are the image tags it makes (the pushed one also
// leaves a digest reference, removed with it).
var walkthroughTags = []string{"demo-task:v2", walkthroughPushed}

// walkthroughRegistry is the address of `make registry`, and
// walkthroughPushed the reference the walkthrough pushes there.
const (
	walkthroughRegistry = "127.0.0.1:5000"
	walkthroughPushed   = walkthroughRegistry + "/demo-task:1"
)

func TestREADMEWalkthroughRunsAsWritten(t *testing.T) {
	t.Parallel() // its own etcd, ports and registry; the host lock keeps it alone among walkthroughs
	cli := dockertest.Client(t)
	root, err := dockertest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, walkthroughSection)
	lockHost(t, filepath.Join(os.TempDir(), "replication-manager-readme-walkthrough.lock"))
	refuseForeignNames(t, cli)

	// The README's commands run in a directory of their own, as in a
	// checkout: bin/ from make build, api/ the module's examples.
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "api"), filepath.Join(work, "api")); err != nil {
		t.Fatal(err)
	}
	etcdURL := "http://" + etcdtest.FreeAddr(t)
	metrics := etcdtest.FreeAddr(t)
	if l, err := net.Listen("tcp", walkthroughRegistry); err != nil {
		t.Fatalf("%s is taken (%v): the walkthrough's make registry listens there", walkthroughRegistry, err)
	} else {
		_ = l.Close()
	}
	// the registry's storage goes with work; the pushed tag and the
	// digest reference its pull leaves go after the daemon's containers
	t.Cleanup(func() { registrytest.RemoveLocal(t, walkthroughPushed) })

	// Registered before the daemon starts, so that it runs after the
	// daemon has stopped and can recreate nothing.
	var registryID string
	t.Cleanup(func() { removeWalkthroughLeftovers(t, registryID) })

	start := time.Now()
	runFlags := strings.Join([]string{
		"--etcd-data-dir", filepath.Join(work, "replication-manager.etcd"),
		"--etcd-listen-client-urls", etcdURL,
		"--etcd-listen-peer-urls", "http://" + etcdtest.FreeAddr(t),
		"--metrics-bind-address", metrics,
	}, " ")
	// the two terminals of the README: the daemon and the registry start together
	daemon := startProgram(t, root, nil, "make", "--no-print-directory", "run", "BIN="+filepath.Join(work, "bin"), "RUN_FLAGS="+runFlags)
	reg := startProgram(t, root, nil, "make", "--no-print-directory", "registry", "BIN="+filepath.Join(work, "bin"),
		"REGISTRY_DIR="+filepath.Join(work, "registry"))
	testpoll.Eventually(t, 10*time.Minute, func() error { // a build with a cold cache takes minutes
		if err := daemon.exited(); err != nil {
			return err
		}
		return ready("http://" + metrics + "/readyz")
	})
	t.Logf("make run: the daemon was ready after %s", time.Since(start).Round(time.Second))
	testpoll.Eventually(t, 10*time.Minute, func() error { // go install with a cold cache takes minutes
		if err := reg.exited(); err != nil {
			return err
		}
		return ready("http://" + walkthroughRegistry + "/v2/")
	})
	t.Logf("make registry: the registry was ready after %s", time.Since(start).Round(time.Second))
	registryID = readRegistryID(t, etcdURL)

	// rcctl finds etcd as etcdctl does; the test's own checks find the
	// registry's containers by its id.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCDCTL_") { // no TLS or auth of another etcd
			env = append(env, kv)
		}
	}
	env = append(env, "ETCDCTL_ENDPOINTS="+etcdURL, "WALKTHROUGH_REGISTRY_ID="+registryID)
	steps, problems := alignWalkthrough(cmds, walkthrough)
	for _, p := range problems {
		t.Error(p)
	}
	for _, s := range steps {
		runWalkStep(t, work, env, s)
	}
	t.Logf("the walkthrough took %s", time.Since(start).Round(time.Second))
}

// alignedStep is a README command with its row of the table.
type alignedStep struct {
	readme readmeCommand
	step   walkStep
}

// alignWalkthrough pairs each README command with the next row of table
// for the same command, and says what does not pair: a command without a
// row (it runs with the default expectation, exit 0, so that the commands
// after it see its effect) and a row the README no longer has there.
func alignWalkthrough(cmds []readmeCommand, table []walkStep) (steps []alignedStep, problems []string) {
	next := 0
	for _, c := range cmds {
		found := -1
		for j := next; j < len(table); j++ {
			if table[j].command == c.command {
				found = j
				break
			}
		}
		if found < 0 {
			problems = append(problems, fmt.Sprintf("README.md:%d: %q has no row in the walkthrough's table (e2e/walkthrough_test.go): add what it shows", c.line, c.command))
			steps = append(steps, alignedStep{readme: c, step: walkStep{command: c.command}})
			continue
		}
		for _, skipped := range table[next:found] {
			problems = append(problems, fmt.Sprintf("the walkthrough's table expects %q before README.md:%d, and the README does not have it there", skipped.command, c.line))
		}
		steps = append(steps, alignedStep{readme: c, step: table[found]})
		next = found + 1
	}
	for _, skipped := range table[next:] {
		problems = append(problems, fmt.Sprintf("the walkthrough's table expects %q, and the README does not have it", skipped.command))
	}
	return steps, problems
}

// TestTheREADMEWalkthroughHasARowPerCommand needs no Docker: a README
// change to a command fails here at once, naming it.
func TestTheREADMEWalkthroughHasARowPerCommand(t *testing.T) {
	_, problems := alignWalkthrough(readmeCommands(t, walkthroughSection), walkthrough)
	for _, p := range problems {
		t.Error(p)
	}
	for _, s := range walkthrough {
		for _, p := range append(append(append([]string(nil), s.stdout...), s.stderr...), s.absent...) {
			if _, err := regexp.Compile(p); err != nil {
				t.Errorf("%q: %v", s.command, err)
			}
		}
	}
}

func TestAlignWalkthroughNamesTheCommandsThatChanged(t *testing.T) {
	cmds := []readmeCommand{
		{line: 1, command: "bin/rcctl get"},
		{line: 2, command: "bin/rcctl scale web --replicas 9"},
		{line: 3, command: "bin/rcctl get"},
	}
	table := []walkStep{
		{command: "bin/rcctl get", stdout: []string{"first"}},
		{command: "bin/rcctl scale web --replicas 5"},
		{command: "bin/rcctl get", stdout: []string{"second"}},
		{command: "bin/rcctl delete web"},
	}
	steps, problems := alignWalkthrough(cmds, table)
	var got []string
	for _, s := range steps {
		got = append(got, s.step.command+" "+strings.Join(s.step.stdout, ","))
	}
	want := []string{"bin/rcctl get first", "bin/rcctl scale web --replicas 9 ", "bin/rcctl get second"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("steps\n got %q\nwant %q", got, want)
	}
	wantProblems := []string{
		`README.md:2: "bin/rcctl scale web --replicas 9" has no row`,
		`expects "bin/rcctl scale web --replicas 5" before README.md:3`,
		`expects "bin/rcctl delete web", and the README does not have it`,
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems %q, want %d", problems, len(wantProblems))
	}
	for i, w := range wantProblems {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d is %q, want it to say %q", i, problems[i], w)
		}
	}
}

// runWalkStep runs one README command, as a shell runs it, until it shows
// what the README says or its time is up.
func runWalkStep(t *testing.T, dir string, env []string, a alignedStep) {
	t.Helper()
	s := a.step
	where := fmt.Sprintf("README.md:%d: %s", a.readme.line, s.command)
	if s.waitsFor != "" {
		where += " (its expectations wait for: " + s.waitsFor + ")"
	}
	deadline := time.Now().Add(s.within)
	for {
		res := runShell(dir, env, a.readme.text, cmp(s.timeout, defaultStepTimeout), s.interrupt)
		problems := res.mismatches(s)
		if len(problems) == 0 || time.Now().After(deadline) {
			t.Logf("$ %s  (%s)\n%s%s", a.readme.text, res.took.Round(100*time.Millisecond), res.stdout, indent("stderr: ", res.stderr))
			if len(problems) > 0 {
				t.Errorf("%s:\n  %s", where, strings.Join(problems, "\n  ")) // its output is logged just above
			}
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, c := range s.after {
		deadline := time.Now().Add(c.within)
		re := regexp.MustCompile(c.stdout)
		for {
			res := runShell(dir, env, c.command, defaultStepTimeout, 0)
			if res.err == nil && re.MatchString(res.stdout) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: then %q should print %q within %s; it printed %q (%v, stderr %q)", where, c.command, c.stdout, c.within, res.stdout, res.err, res.stderr)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// cmp returns d, or def when d is zero.
func cmp(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func indent(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// shellResult is what a command printed and how it ended.
type shellResult struct {
	stdout, stderr string
	exit           int
	err            error // a failure to run, or the timeout
	took           time.Duration
}

// runShell runs text with bash -o pipefail in dir, in a process group of
// its own, which gets SIGINT after interrupt (when not zero) and SIGKILL
// after timeout.
func runShell(dir string, env []string, text string, timeout, interrupt time.Duration) shellResult {
	cmd := exec.Command("bash", "-o", "pipefail", "-c", text)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return shellResult{err: err, exit: -1}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var sigint <-chan time.Time
	if interrupt > 0 {
		sigint = time.After(interrupt)
	}
	kill := time.After(timeout)
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-sigint:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		case <-kill:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = fmt.Errorf("still running after %s: killed (%w)", timeout, <-done)
			break wait
		}
	}
	res := shellResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		res.exit = exit.ExitCode()
	case errors.As(err, &exit) && interrupt > 0:
		res.exit = 0 // stopped by the Ctrl-C the README asks for
	default:
		res.err, res.exit = err, -1
	}
	return res
}

// mismatches lists how res differs from what s expects.
func (res shellResult) mismatches(s walkStep) []string {
	var out []string
	if res.err != nil {
		return []string{res.err.Error()}
	}
	if res.exit != s.exit {
		out = append(out, fmt.Sprintf("exit status %d, want %d", res.exit, s.exit))
	}
	for _, p := range s.stdout {
		if !regexp.MustCompile(p).MatchString(res.stdout) {
			out = append(out, fmt.Sprintf("stdout does not match %q", p))
		}
	}
	for _, p := range s.stderr {
		if !regexp.MustCompile(p).MatchString(res.stderr) {
			out = append(out, fmt.Sprintf("stderr does not match %q", p))
		}
	}
	for _, p := range s.absent {
		if regexp.MustCompile(p).MatchString(res.stdout) {
			out = append(out, fmt.Sprintf("stdout matches %q, which it should not", p))
		}
	}
	return out
}

// ready returns nil when url answers 200.
func ready(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// readRegistryID reads the id the daemon stores, which every container
// and volume it makes carries.
func readRegistryID(t *testing.T, etcdURL string) string {
	t.Helper()
	var id string
	store := registry.NewStore(etcdClient(t, etcdURL), "")
	testpoll.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		var err error
		id, err = store.GetRegistryID(ctx)
		return err
	})
	return id
}

// lockHost holds an exclusive lock on path until the test ends, waiting
// for another walkthrough on this host to finish.
func lockHost(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
	testpoll.Eventually(t, 10*time.Minute, func() error {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return fmt.Errorf("another README walkthrough holds %s: %w", path, err)
		}
		return nil
	})
}

// refuseForeignNames fails the test when a container holds a name the
// walkthrough's controllers will take, or an image has a tag it makes:
// they belong to someone else (or to a walkthrough that was killed; then
// remove them by hand).
func refuseForeignNames(t *testing.T, cli dockerClient) {
	t.Helper()
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Join(walkthroughIDs, "|")
	taken := regexp.MustCompile(`^/(` + strings.ReplaceAll(ids, "-", `\-`) + `)-\d+(\..+)?$`)
	for _, c := range list {
		for _, name := range c.Names {
			if taken.MatchString(name) {
				t.Fatalf("container %s (%.12s) holds a name the README walkthrough makes; remove it (docker rm -f %s) to run this test", name[1:], c.ID, name[1:])
			}
		}
	}
	for _, tag := range walkthroughTags {
		if _, err := cli.ImageInspect(t.Context(), tag); err == nil {
			t.Fatalf("image tag %s exists, and the README walkthrough makes it; remove it (docker rmi %s) to run this test", tag, tag)
		}
	}
}

// removeWalkthroughLeftovers removes every container and volume of the
// registry, and the image tags the walkthrough makes; after a pass there
// is nothing, after a failure whatever the walkthrough left.
func removeWalkthroughLeftovers(t *testing.T, registryID string) {
	t.Helper()
	cli := dockertest.Client(t)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
	defer cancel()
	var errs []error
	if registryID != "" {
		errs = append(errs, dockertest.RemoveContainers(ctx, cli, api.LabelRegistry, registryID))
		vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", api.LabelRegistry+"="+registryID))})
		if err != nil {
			errs = append(errs, err)
		} else {
			for _, v := range vols.Volumes {
				if err := cli.VolumeRemove(ctx, v.Name, true); err != nil && !cerrdefs.IsNotFound(err) {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, tag := range walkthroughTags {
		if _, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove image %s: %w", tag, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("cleanup of the README walkthrough: %v", err)
	}
}
