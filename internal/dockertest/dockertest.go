// Package dockertest helps tests that need a real Docker Engine: it skips
// them loudly when none answers (or fails them when REQUIRE_DOCKER=1),
// builds the demo image once per test binary, removes every container
// and image a test run made, found by a label unique to the run, and,
// after a run that failed, says whether the engine hangs (stuck.go).
//
// A test package that uses it runs its tests through Main:
//
//	func TestMain(m *testing.M) { os.Exit(dockertest.Main(m)) }
//
// and gives every container it creates the labels of Labels(t).
package dockertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

const (
	// RunLabel is on every container of a test run; its value is RunID().
	RunLabel = "rmtest.run"
	// TestLabel is on every container of one test; its value is unique to
	// the test within the run.
	TestLabel = "rmtest.test"
	// RequireEnv, set to 1, turns the skip of a missing Docker into a
	// failure.
	RequireEnv = "REQUIRE_DOCKER"

	pingTimeout    = 5 * time.Second
	cleanupTimeout = time.Minute
)

var (
	runIDOnce sync.Once
	runID     string

	pingOnce sync.Once
	pingErr  error

	// used is set once a test has reached the engine, so that Main knows
	// there may be something to clean up.
	usedMu sync.Mutex
	used   bool
	images []string

	demoOnce  sync.Once
	demoImage string
	demoErr   error

	// testSeq numbers the tests of a run.
	testSeq atomic.Int64
)

// RunID returns a random identifier of this test binary's run.
func RunID() string {
	runIDOnce.Do(func() {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("dockertest: random run id: %v", err))
		}
		runID = hex.EncodeToString(b[:])
	})
	return runID
}

// newClient connects as the docker CLI would (DOCKER_HOST and friends, else
// the local socket), negotiating the API version at once (negotiated).
func newClient() (*client.Client, error) {
	return negotiated(client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation()))
}

// negotiated settles the API version of a new client before a test shares
// it between goroutines. Left to itself, the client negotiates on its
// first call, and docker/client v28 reads the version without its lock
// (ContainerList's filters) while another goroutine's first call writes
// it: a data race that -race reports in whichever tests run then.
func negotiated(cli *client.Client, err error) (*client.Client, error) {
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	cli.NegotiateAPIVersion(ctx) // an engine that does not answer is negotiated with on first use, as before
	return cli, nil
}

// RequireDocker skips the test when no Docker Engine answers a ping, or
// fails it when REQUIRE_DOCKER=1. The ping is done once per test binary.
func RequireDocker(tb testing.TB) {
	tb.Helper()
	pingOnce.Do(func() {
		cli, err := newClient()
		if err != nil {
			pingErr = err
			return
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), pingTimeout) // shared by every test
		defer cancel()
		_, pingErr = cli.Ping(ctx)
	})
	if pingErr == nil {
		usedMu.Lock()
		used = true
		usedMu.Unlock()
		return
	}
	msg := fmt.Sprintf("no Docker Engine answers (%v)", pingErr)
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("%s, and %s=1 requires one", msg, RequireEnv)
	}
	tb.Skipf("SKIPPING: %s; set %s=1 to make this a failure", msg, RequireEnv)
}

// Client returns a Docker client for the test, closed when the test ends,
// after skipping the test as RequireDocker does.
func Client(tb testing.TB) *client.Client {
	tb.Helper()
	RequireDocker(tb)
	cli, err := newClient()
	if err != nil {
		tb.Fatalf("docker client: %v", err)
	}
	tb.Cleanup(func() { _ = cli.Close() })
	return cli
}

// Labels returns the labels every container of the test must carry: the
// run's and one unique to the test. When the test ends, pass or fail, the
// containers carrying the test's label are removed. It skips the test as
// RequireDocker does.
func Labels(tb testing.TB) map[string]string {
	tb.Helper()
	cli := Client(tb)
	value := fmt.Sprintf("%s-%d-%s", RunID(), testSeq.Add(1), labelSafe(tb.Name()))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), cleanupTimeout) // tb.Context() ends before cleanups run
		defer cancel()
		if err := RemoveContainers(ctx, cli, TestLabel, value); err != nil {
			tb.Errorf("cleanup: %v", err)
		}
	})
	return map[string]string{RunLabel: RunID(), TestLabel: value}
}

// WithLabels returns a copy of labels with the test's labels added.
func WithLabels(tb testing.TB, labels map[string]string) map[string]string {
	tb.Helper()
	out := maps.Clone(labels)
	if out == nil {
		out = make(map[string]string)
	}
	maps.Copy(out, Labels(tb))
	return out
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// labelSafe shortens a test name into something readable in a label.
func labelSafe(name string) string {
	name = unsafeChars.ReplaceAllString(name, "_")
	if len(name) > 40 {
		name = name[:40]
	}
	return name
}

// RemoveContainers force-removes every container, in any state, carrying
// the label key=value.
func RemoveContainers(ctx context.Context, cli *client.Client, key, value string) error {
	list, err := cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", key+"="+value)),
	})
	if err != nil {
		return fmt.Errorf("list containers %s=%s: %w", key, value, err)
	}
	var errs []error
	for _, c := range list {
		err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "already in progress") {
			errs = append(errs, fmt.Errorf("remove container %.12s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
}

// RepoRoot returns the module's root directory, found from the working
// directory (a test runs in its package's directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// BuildImage runs scripts/build-image.sh with args (such as "--cmd",
// "demo-task", and the image tag last). The image is not removed: see
// DemoImage for one that is.
func BuildImage(ctx context.Context, args ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return fmt.Errorf("build image: %w", err)
	}
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "scripts", "build-image.sh")}, args...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build image %q: %w\n%s", args, err, out)
	}
	return nil
}

// DemoImage builds the demo-task image once per test binary, tagged
// demo-task:test-<RunID>, and returns the tag; Main removes the tag at the
// end. It skips the test as RequireDocker does.
func DemoImage(tb testing.TB) string {
	tb.Helper()
	RequireDocker(tb)
	demoOnce.Do(func() {
		tag := "demo-task:test-" + RunID()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), 5*time.Minute) // shared by every test
		defer cancel()
		if demoErr = BuildImage(ctx, "--cmd", "demo-task", "--bin-name", "task", tag); demoErr == nil {
			demoImage = tag
			usedMu.Lock()
			images = append(images, tag)
			usedMu.Unlock()
		}
	})
	if demoErr != nil {
		tb.Fatalf("demo image: %v", demoErr)
	}
	return demoImage
}

// Main runs the tests, then, if one failed, checks that the engine still
// answers (EngineStuck), and removes every container labelled with this
// run's RunLabel and every image DemoImage built. It returns the exit code
// for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	usedMu.Lock()
	needed := used
	tags := append([]string(nil), images...)
	usedMu.Unlock()
	if !needed {
		return code
	}
	if code != 0 {
		reportStuck() // a failure may come from an engine that hangs
	}
	if err := cleanupRun(tags); err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: cleanup of run %s: %v\n", RunID(), err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func cleanupRun(tags []string) error {
	cli, err := newClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	errs := []error{RemoveContainers(ctx, cli, RunLabel, RunID())}
	for _, tag := range tags {
		if _, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove image %s: %w", tag, err))
		}
	}
	return errors.Join(errs...)
}
