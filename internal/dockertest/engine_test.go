package dockertest_test

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestEngineRunsContainersOfItsOwnAndLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second dockerd")
	}
	image := dockertest.DemoImage(t)
	main := dockertest.Client(t)

	var e *dockertest.Engine
	t.Run("engine", func(t *testing.T) {
		start := time.Now()
		e = dockertest.StartEngine(t)
		t.Logf("second engine %s answered after %s", e.Host, time.Since(start).Round(time.Millisecond))
		mainInfo, err := main.Info(t.Context())
		if err != nil {
			t.Fatalf("main engine info: %v", err)
		}
		if e.Name() == "" || e.ID() == "" || e.ID() == mainInfo.ID {
			t.Errorf("Name %q, ID %q: want both set, and an ID other than the main engine's %q", e.Name(), e.ID(), mainInfo.ID)
		}
		if !strings.HasPrefix(e.Host, "unix://"+e.Dir+"/") {
			t.Errorf("Host %q: want a socket in Dir %q", e.Host, e.Dir)
		}

		start = time.Now()
		e.LoadImage(t, image)
		t.Logf("loaded %s in %s", image, time.Since(start).Round(time.Millisecond))

		cli := e.Client(t)
		labels := dockertest.Labels(t)
		created, err := cli.ContainerCreate(t.Context(), &container.Config{Image: image, Labels: labels}, nil, nil, nil, "")
		if err != nil {
			t.Fatalf("ContainerCreate on the second engine: %v", err)
		}
		if err := cli.ContainerStart(t.Context(), created.ID, container.StartOptions{}); err != nil {
			t.Fatalf("ContainerStart on the second engine: %v", err)
		}
		var ip string
		testpoll.Eventually(t, 30*time.Second, func() error {
			c, err := cli.ContainerInspect(t.Context(), created.ID)
			if err != nil {
				return err
			}
			if c.State == nil || !c.State.Running {
				return fmt.Errorf("container %.12s is not running: %+v", created.ID, c.State)
			}
			bridge := c.NetworkSettings.Networks["bridge"]
			if bridge == nil || bridge.IPAddress == "" {
				return fmt.Errorf("container %.12s has no address on the default network: %+v", created.ID, c.NetworkSettings.Networks)
			}
			ip = bridge.IPAddress
			return nil
		})
		if subnet := bridgeSubnet(t, e); !subnet.Contains(netip.MustParseAddr(ip)) {
			t.Errorf("container address %s: want one of the bridge %s's %s", ip, e.Bridge, subnet)
		}

		filter := filters.NewArgs(filters.Arg("label", dockertest.TestLabel+"="+labels[dockertest.TestLabel]))
		if n := count(t, cli, filter); n != 1 {
			t.Errorf("second engine: %d containers of the test, want 1", n)
		}
		if n := count(t, main, filter); n != 0 {
			t.Errorf("main engine: %d containers of the test, want none: they are the second engine's", n)
		}
		if e.LogTail() == "" {
			t.Error("LogTail is empty")
		}
	})
	if e == nil {
		t.Fatal("the subtest did not start an engine")
	}

	// the subtest's cleanup has stopped the engine
	assertNetworkGone(t, e)
	if _, err := os.Stat(e.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Dir %s: %v; want it removed", e.Dir, err)
	}
	if pids := processesNaming(e.Dir); len(pids) > 0 {
		t.Errorf("processes naming %s still run after the cleanup: %v", e.Dir, pids)
	}
	cli, err := client.NewClientWithOpts(client.WithHost(e.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Ping(t.Context()); err == nil {
		t.Errorf("the engine at %s still answers after the cleanup", e.Host)
	}
}

func TestEngineCleanupAfterDockerdWasKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second dockerd")
	}
	image := dockertest.DemoImage(t)
	var e *dockertest.Engine
	var taskPID int
	t.Run("engine", func(t *testing.T) {
		e = dockertest.StartEngine(t)
		e.LoadImage(t, image)
		cli := e.Client(t)
		created, err := cli.ContainerCreate(t.Context(), &container.Config{Image: image, Labels: dockertest.Labels(t)}, nil, nil, nil, "")
		if err != nil {
			t.Fatalf("ContainerCreate: %v", err)
		}
		if err := cli.ContainerStart(t.Context(), created.ID, container.StartOptions{}); err != nil {
			t.Fatalf("ContainerStart: %v", err)
		}
		c, err := cli.ContainerInspect(t.Context(), created.ID)
		if err != nil || c.State == nil || c.State.Pid == 0 {
			t.Fatalf("ContainerInspect: %v, %+v", err, c.State)
		}
		taskPID = c.State.Pid
		// a killed dockerd leaves its container, shim and mounts behind
		pid, err := os.ReadFile(filepath.Join(e.Dir, "docker.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("kill", "-KILL", strings.TrimSpace(string(pid))).CombinedOutput(); err != nil {
			t.Fatalf("kill dockerd: %v: %s", err, out)
		}
		testpoll.Until(t, 10*time.Second, "dockerd gone", func() bool {
			_, err := cli.Ping(t.Context())
			return err != nil
		})
		if len(processesNaming(e.Dir+"/exec/")) == 0 {
			t.Fatal("no shim left after the kill: the test no longer tests the cleanup of one")
		}
	})
	if e == nil {
		t.Fatal("the subtest did not start an engine")
	}
	assertNetworkGone(t, e)
	if _, err := os.Stat(e.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Dir %s: %v; want it removed", e.Dir, err)
	}
	if pids := processesNaming(e.Dir); len(pids) > 0 {
		t.Errorf("processes naming %s still run after the cleanup: %v", e.Dir, pids)
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(mounts), e.Dir) {
		t.Errorf("mounts under %s remain after the cleanup", e.Dir)
	}
	// gone, or a zombie that init has yet to reap
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", taskPID)); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Errorf("the container's process %d still runs after the cleanup: %s", taskPID, stat)
	}
}

func TestEnginesInParallelEachHaveTheirOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two second dockerds")
	}
	var mu sync.Mutex
	seen := map[string]string{}
	t.Run("group", func(t *testing.T) {
		for i := range 2 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				e := dockertest.StartEngine(t)
				bridgeSubnet(t, e) // its bridge has an address in its own namespace
				mu.Lock()
				defer mu.Unlock()
				// each bridge is in a namespace of its own, so two may share a
				// subnet; what they must not share is named here
				for _, v := range []string{e.Host, e.Netns, e.Bridge, e.ID()} {
					if other, ok := seen[v]; ok {
						t.Errorf("%s is also engine %s's", v, other)
					}
					seen[v] = t.Name()
				}
			})
		}
	})
}

// bridgeSubnet returns the IPv4 subnet of the bridge's address.
func bridgeSubnet(t *testing.T, e *dockertest.Engine) netip.Prefix {
	t.Helper()
	out, err := exec.Command("ip", "-n", e.Netns, "-4", "-o", "addr", "show", "dev", e.Bridge).CombinedOutput()
	if err != nil {
		t.Fatalf("bridge %s in %s: %v: %s", e.Bridge, e.Netns, err, out)
	}
	// 5: rmbr...    inet 10.213.7.1/24 scope global rmbr...
	fields := strings.Fields(string(out))
	for i, f := range fields {
		if f == "inet" && i+1 < len(fields) {
			if p, err := netip.ParsePrefix(fields[i+1]); err == nil {
				return p.Masked()
			}
		}
	}
	t.Fatalf("bridge %s has no IPv4 address: %s", e.Bridge, out)
	return netip.Prefix{}
}

// assertNetworkGone checks that the engine's namespace, and with it its
// bridge, are gone, and that the bridge never was on this host's network.
func assertNetworkGone(t *testing.T, e *dockertest.Engine) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil || strings.Contains(string(out), e.Netns) {
		t.Errorf("network namespace %s after the cleanup: %v\n%s", e.Netns, err, out)
	}
	if out, err := exec.Command("ip", "link", "show", e.Bridge).CombinedOutput(); err == nil {
		t.Errorf("bridge %s is on this host's network:\n%s", e.Bridge, out)
	}
}

func count(t *testing.T, cli *client.Client, f filters.Args) int {
	t.Helper()
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatalf("ContainerList: %v", err)
	}
	return len(list)
}

// processesNaming lists the pids whose command line contains s.
func processesNaming(s string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if cmdline, err := os.ReadFile(filepath.Join(d, "cmdline")); err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}
