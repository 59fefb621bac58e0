package dockertest

// A second Docker engine on this machine, for tests of several nodes
// (docs/NODES.md): its own dockerd, socket, data and exec root,
// in a network namespace of its own with a bridge of its own, so that its
// containers' host ports are its own, as on another host. Never --bridge
// none: that deletes the main engine's docker0.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/internal/testpoll"
)

const (
	engineStartTimeout = time.Minute
	engineStopTimeout  = 30 * time.Second
	engineLoadTimeout  = 2 * time.Minute
	engineLogLines     = 40
)

// Engine is a second dockerd that StartEngine started for a test.
type Engine struct {
	// Host is the engine's address, unix://<Dir>/docker.sock: a DOCKER_HOST
	// or a --docker-host.
	Host string
	// Netns is the network namespace the engine runs in, made for it and
	// deleted with it: the engine's containers and the host ports they
	// publish are its own, as on another host, and the main engine's
	// network (docker0) is out of its reach.
	Netns string
	// Bridge is the network bridge of the engine's containers, made for it
	// in Netns and deleted with it.
	Bridge string
	// Dir holds the engine's socket, data, exec root, config and log
	// (dockerd.log); it is removed with the engine.
	Dir string

	cli      *client.Client // the engine's own, for Ping, Info and the cleanup
	name, id string
	cmd      *exec.Cmd
	done     chan struct{} // closed when dockerd has exited
	waitErr  error         // how it exited, once done is closed
	ready    bool          // StartEngine returned it; its failures show the log themselves
	stopOnce sync.Once
}

// engineMu makes the choice and creation of a bridge atomic within the
// test binary; another test binary is seen by its routes.
var engineMu sync.Mutex

// StartEngine starts a second Docker engine, waits until it answers a ping
// and returns it; when the test ends, pass or fail, the engine is stopped
// with its containers, and its namespace, bridge and Dir are deleted. It needs root,
// dockerd, ip and nsenter, and skips the test as RequireDocker does without them.
// Each call makes an engine of its own, so parallel tests may each start
// one. The engine uses the main engine's storage driver.
func StartEngine(tb testing.TB) *Engine {
	tb.Helper()
	main := Client(tb)
	requireEngineTools(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), 30*time.Second)
	info, err := main.Info(ctx)
	cancel()
	if err != nil {
		tb.Fatalf("second engine: info of the main engine: %v", err)
	}

	// unix socket paths are limited to 108 bytes: a short dir in /tmp
	dir, err := os.MkdirTemp("/tmp", "rm-engine-") //nolint:usetesting // tb.TempDir() is too long a path for the socket
	if err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	e := &Engine{Host: "unix://" + filepath.Join(dir, "docker.sock"), Dir: dir, done: make(chan struct{})}
	tb.Cleanup(func() { e.stop(tb) })
	e.Netns = addNetns(tb)
	e.Bridge = addBridge(tb, e.Netns)
	e.cmd = e.startDockerd(tb, info.Driver)

	e.cli, err = client.NewClientWithOpts(client.WithHost(e.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		tb.Fatalf("second engine: client: %v", err)
	}
	logPath := e.logPath()
	testpoll.Eventually(tb, engineStartTimeout, func() error {
		select {
		case <-e.done:
			tb.Fatalf("second engine: dockerd exited before it answered (%v); its log %s ends:\n%s", e.waitErr, logPath, e.LogTail())
		default:
		}
		ctx, cancel := context.WithTimeout(tb.Context(), 2*time.Second)
		defer cancel()
		if _, err := e.cli.Ping(ctx); err != nil {
			return fmt.Errorf("second engine at %s does not answer a ping (%w); its log %s ends:\n%s", e.Host, err, logPath, e.LogTail())
		}
		return nil
	})
	ctx, cancel = context.WithTimeout(tb.Context(), 30*time.Second)
	defer cancel()
	own, err := e.cli.Info(ctx)
	if err != nil {
		tb.Fatalf("second engine: info: %v; its log %s ends:\n%s", err, logPath, e.LogTail())
	}
	e.name, e.id = own.Name, own.ID
	e.ready = true
	return e
}

// requireEngineTools skips the test (or fails it, with REQUIRE_DOCKER=1)
// when a second dockerd cannot be started here.
func requireEngineTools(tb testing.TB) {
	tb.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, bin := range []string{"dockerd", "ip", "nsenter"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("a second Docker engine needs %s", strings.Join(missing, ", "))
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("%s, and %s=1 requires one", msg, RequireEnv)
	}
	tb.Skipf("SKIPPING: %s; set %s=1 to make this a failure", msg, RequireEnv)
}

// addNetns makes a network namespace of a random name with its loopback
// up, and returns its name; the engine's stop deletes it.
func addNetns(tb testing.TB) string {
	tb.Helper()
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	name := "rmns" + hex.EncodeToString(b[:])
	if err := runIP("netns", "add", name); err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	if err := runIP("-n", name, "link", "set", "lo", "up"); err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	return name
}

// addBridge makes a bridge of a random name in netns, with a /24 of
// 10.213.0.0/16 that no route of this host uses (so that its addresses
// are never mistaken for another's in logs), and returns its name; the
// engine's stop deletes it.
func addBridge(tb testing.TB, netns string) string {
	tb.Helper()
	engineMu.Lock()
	defer engineMu.Unlock()
	for range 20 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			tb.Fatalf("second engine: %v", err)
		}
		name := "rmbr" + hex.EncodeToString(b[:3])
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, b[3], 0}), 24)
		if n, err := routesOverlapping(subnet); err != nil {
			tb.Fatalf("second engine: %v", err)
		} else if n > 0 {
			continue
		}
		gateway := netip.PrefixFrom(subnet.Addr().Next(), 24)
		if err := runIP("-n", netns, "link", "add", name, "type", "bridge"); err != nil {
			tb.Fatalf("second engine: %v", err)
		}
		if err := errors.Join(runIP("-n", netns, "addr", "add", gateway.String(), "dev", name), runIP("-n", netns, "link", "set", name, "up")); err != nil {
			_ = runIP("-n", netns, "link", "del", name)
			tb.Fatalf("second engine: %v", err)
		}
		return name
	}
	tb.Fatalf("second engine: no free /24 in 10.213.0.0/16 after 20 draws")
	return ""
}

// routesOverlapping counts the routes (ip -4 route) whose prefix overlaps p.
func routesOverlapping(p netip.Prefix) (int, error) {
	out, err := exec.Command("ip", "-4", "route", "show").Output()
	if err != nil {
		return 0, fmt.Errorf("ip route: %w", err)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == "default" {
			continue
		}
		dst := fields[0]
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if q, err := netip.ParsePrefix(dst); err == nil && q.Overlaps(p) {
			n++
		}
	}
	return n, nil
}

func runIP(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

var dockerdMajor = regexp.MustCompile(`version (\d+)\.`)

// startDockerd starts dockerd with everything of its own under Dir, and a
// goroutine that closes e.done when it exits.
func (e *Engine) startDockerd(tb testing.TB, driver string) *exec.Cmd {
	tb.Helper()
	data := filepath.Join(e.Dir, "data")
	if err := os.MkdirAll(data, 0o711); err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	// The engine's ID must not be the main engine's. Docker 23 and later
	// keep it in <data-root>/engine-id; 20.10 derives it from the key at
	// deprecated-key-path, /etc/docker/key.json unless the config says
	// otherwise, as the main engine's does.
	if err := os.WriteFile(filepath.Join(data, "engine-id"), []byte(randomUUID()), 0o600); err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	config := map[string]any{}
	if out, err := exec.Command("dockerd", "--version").Output(); err == nil {
		if m := dockerdMajor.FindSubmatch(out); m != nil {
			if major, _ := strconv.Atoi(string(m[1])); major < 23 {
				config["deprecated-key-path"] = filepath.Join(e.Dir, "key.json")
			}
		}
	}
	configJSON, _ := json.Marshal(config)
	configPath := filepath.Join(e.Dir, "daemon.json")
	if err := os.WriteFile(configPath, configJSON, 0o600); err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	logFile, err := os.Create(e.logPath())
	if err != nil {
		tb.Fatalf("second engine: %v", err)
	}
	defer logFile.Close() // dockerd has its own copy

	args := []string{
		"--host", e.Host,
		"--data-root", data,
		"--exec-root", filepath.Join(e.Dir, "exec"),
		"--pidfile", filepath.Join(e.Dir, "docker.pid"),
		"--config-file", configPath,
		"--bridge", e.Bridge, "--iptables=false", "--ip-masq=false",
	}
	if driver != "" {
		args = append(args, "--storage-driver", driver)
	}
	// nsenter enters the network namespace alone (ip netns exec would also
	// remount /sys, hiding the cgroups from dockerd) and then execs dockerd
	// itself: the process, and its pid, are dockerd's
	cmd := exec.Command("nsenter", append([]string{"--net=/var/run/netns/" + e.Netns, "dockerd"}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A group of its own keeps a ^C from reaching it before the cleanup;
	// Pdeathsig stops it if the test binary dies without one (a -timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the process ends:
		// this goroutine keeps it until dockerd has exited.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(e.done)
			return
		}
		started <- nil
		e.waitErr = cmd.Wait()
		close(e.done)
	}()
	if err := <-started; err != nil {
		tb.Fatalf("second engine: start dockerd: %v", err)
	}
	return cmd
}

func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (e *Engine) logPath() string { return filepath.Join(e.Dir, "dockerd.log") }

// Client returns a client of the engine, with API version negotiation,
// closed when the test ends.
func (e *Engine) Client(tb testing.TB) *client.Client {
	tb.Helper()
	cli, err := negotiated(client.NewClientWithOpts(client.WithHost(e.Host), client.WithAPIVersionNegotiation()))
	if err != nil {
		tb.Fatalf("second engine client: %v", err)
	}
	tb.Cleanup(func() { _ = cli.Close() })
	return cli
}

// LoadImage copies image from the main engine into this one, as
// docker save IMAGE | docker -H HOST load does.
func (e *Engine) LoadImage(tb testing.TB, image string) {
	tb.Helper()
	main := Client(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), engineLoadTimeout)
	defer cancel()
	saved, err := main.ImageSave(ctx, []string{image})
	if err != nil {
		tb.Fatalf("load %s into the second engine: save: %v", image, err)
	}
	defer saved.Close()
	resp, err := e.cli.ImageLoad(ctx, saved, client.ImageLoadWithQuiet(true))
	if err != nil {
		tb.Fatalf("load %s into the second engine: %v", image, err)
	}
	defer resp.Body.Close()
	if err := loadError(resp.Body); err != nil {
		tb.Fatalf("load %s into the second engine: %v", image, err)
	}
	if _, err := e.cli.ImageInspect(ctx, image); err != nil {
		tb.Fatalf("load %s into the second engine: not there after the load: %v", image, err)
	}
}

// loadError reads the load's JSON message stream and returns the error it
// reports, if any.
func loadError(body io.Reader) error {
	dec := json.NewDecoder(body)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read the load's response: %w", err)
		}
		if msg.ErrorDetail != nil && msg.ErrorDetail.Message != "" {
			return errors.New(msg.ErrorDetail.Message)
		}
		if msg.Error != "" {
			return errors.New(msg.Error)
		}
	}
}

// Name is the engine's name as docker info reports it (the host name: the
// main engine's too).
func (e *Engine) Name() string { return e.name }

// ID is the engine's ID as docker info reports it, not the main engine's.
func (e *Engine) ID() string { return e.id }

// LogTail returns the last lines of the engine's dockerd log.
func (e *Engine) LogTail() string {
	data, err := os.ReadFile(e.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-engineLogLines):], "\n")
}

// stop removes the engine's containers, stops dockerd by its pid (SIGTERM,
// then SIGKILL), kills what a killed dockerd leaves (shims and their
// containers), unmounts what is left under Dir, and deletes the bridge and
// Dir. It copes with an engine that StartEngine left half made.
func (e *Engine) stop(tb testing.TB) {
	tb.Helper()
	e.stopOnce.Do(func() {
		if tb.Failed() && e.ready {
			tb.Logf("second engine %s: its log %s (removed now) ends:\n%s", e.Host, e.logPath(), e.LogTail())
		}
		if e.cli != nil {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), engineStopTimeout) // tb.Context() ends before cleanups run
			if list, err := e.cli.ContainerList(ctx, container.ListOptions{All: true}); err == nil {
				for _, c := range list {
					_ = e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
				}
			}
			cancel()
			_ = e.cli.Close()
		}
		var errs []error
		if e.cmd != nil && e.cmd.Process != nil {
			_ = e.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-e.done:
			case <-time.After(engineStopTimeout):
				tb.Logf("second engine: dockerd did not stop within %s of a SIGTERM: killing it", engineStopTimeout)
				_ = e.cmd.Process.Kill()
				<-e.done
			}
			killLeftovers(tb, e.Dir)
		}
		errs = append(errs, unmountUnder(e.Dir))
		if e.Bridge != "" {
			errs = append(errs, runIP("-n", e.Netns, "link", "del", e.Bridge))
		}
		if e.Netns != "" {
			errs = append(errs, runIP("netns", "del", e.Netns))
		}
		errs = append(errs, os.RemoveAll(e.Dir))
		if err := errors.Join(errs...); err != nil {
			tb.Errorf("second engine cleanup: %v", err)
		}
	})
}

// killLeftovers SIGKILLs every process whose command line names dir's
// exec or data root (the shims and fuse-overlayfs of a dockerd that was
// killed; not a client of its socket) and their descendants (the
// containers' processes), and waits until they are gone.
func killLeftovers(tb testing.TB, dir string) {
	tb.Helper()
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	var roots []int
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat")); err == nil {
			// pid (comm) state ppid ...: comm may hold spaces and parentheses
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
					parent[pid], _ = strconv.Atoi(f[1])
				}
			}
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline")); err == nil &&
			(strings.Contains(string(cmdline), dir+"/exec/") || strings.Contains(string(cmdline), dir+"/data/")) {
			roots = append(roots, pid)
		}
	}
	var killed []int
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if slices.Contains(roots, p) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed = append(killed, pid)
				}
				break
			}
		}
	}
	testpoll.Eventually(tb, 10*time.Second, func() error {
		var alive []int
		for _, pid := range killed {
			// gone, or a zombie that its new parent, init, reaps
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && !strings.HasPrefix(string(stat[i+1:]), " Z") {
				alive = append(alive, pid)
			}
		}
		if len(alive) > 0 {
			return fmt.Errorf("second engine cleanup: processes %v of %s survive a SIGKILL", alive, dir)
		}
		return nil
	})
}

// unmountUnder lazily unmounts every mount at or under dir, deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint ...; spaces in it are \040
		if fields := strings.Fields(sc.Text()); len(fields) > 4 {
			p := strings.ReplaceAll(fields[4], `\040`, " ")
			if p == dir || strings.HasPrefix(p, dir+"/") {
				points = append(points, p)
			}
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(append(errs, sc.Err())...)
}
