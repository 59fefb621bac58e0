package roles

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/internal/benchenv"
)

// memoryChildEtcd names the environment variable that makes the test
// binary the child of BenchmarkHostMemory; it holds the parent's etcd
// client URL.
const memoryChildEtcd = "RM_BENCH_MEMORY_CHILD_ETCD"

// BenchmarkHostMemory is the memory of a converged host of controllers ×
// replicas (target: RSS ≤ 300 MiB at 10,000 × 10), after one full resync.
// The host runs in a child process of its own, on the package's etcd, so
// that its RSS is the host's and not the etcd's: the child is this test
// binary again (memoryChildEtcd), and it holds the host, its etcd client,
// and bareTasks, a task control that keeps a few strings per container
// (Docker keeps the containers in dockerd). It reports the child's RSS and
// its heap in use after a GC. With RM_BENCH_HEAP_PROFILE set, the child
// writes its heap's profile there (go tool pprof
// -sample_index=inuse_space reads it).
func BenchmarkHostMemory(b *testing.B) {
	controllers, replicas := benchenv.Int(b, "RM_BENCH_CONTROLLERS", 10000), benchenv.Int(b, "RM_BENCH_REPLICAS", 10)
	if os.Getenv(memoryChildEtcd) != "" {
		measureHostMemory(b, controllers, replicas)
		return
	}
	b.Run(fmt.Sprintf("controllers=%d/replicas=%d", controllers, replicas), func(b *testing.B) {
		var heap, rss float64
		for b.Loop() {
			h, r := hostMemoryOfChild(b)
			heap, rss = heap+float64(h), rss+float64(r)
		}
		b.ReportMetric(heap/float64(b.N)/(1<<20), "host-heap-MiB")
		b.ReportMetric(rss/float64(b.N)/(1<<20), "host-rss-MiB")
	})
}

// hostMemoryOfChild runs BenchmarkHostMemory in a child process on the
// package's etcd and returns the heap and RSS the child measured.
func hostMemoryOfChild(b *testing.B) (heap, rss uint64) {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkHostMemory$", "-test.benchtime=1x")
	cmd.Env = append(os.Environ(), memoryChildEtcd+"="+etcdServer.Server(b).ClientURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("the child measuring the host's memory: %v\n%s%s", err, out, stderr.Bytes())
	}
	for line := range strings.Lines(string(out)) {
		if _, err := fmt.Sscanf(line, "host-memory heap=%d rss=%d", &heap, &rss); err == nil {
			return heap, rss
		}
	}
	b.Fatalf("the child measuring the host's memory said no figures:\n%s", out)
	return 0, 0
}

// measureHostMemory is the child's part: it converges a host on
// bareTasks, resyncs it once, and prints its heap and RSS for the parent.
func measureHostMemory(b *testing.B, controllers, replicas int) {
	b.Helper()
	bare := newBareTasks()
	s, _, _ := convergeHost(b, b, bare, controllers, replicas)
	defer func() { s.stop(b); s.forget(b) }()
	s.resync(b)
	heap := liveHeap()
	rss := selfRSS(b)
	writeHeapProfile(b, os.Getenv("RM_BENCH_HEAP_PROFILE"))
	fmt.Printf("host-memory heap=%d rss=%d\n", heap, rss)
	runtime.KeepAlive(bare)
}

// writeHeapProfile writes the heap's profile to path, unless path is "".
func writeHeapProfile(tb testing.TB, path string) {
	tb.Helper()
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := errors.Join(pprof.Lookup("heap").WriteTo(f, 0), f.Close()); err != nil {
		tb.Fatalf("heap profile: %v", err)
	}
}

// liveHeap is the heap in use after a full GC.
func liveHeap() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// selfRSS is the process's resident memory (VmRSS of /proc/self/status).
func selfRSS(tb testing.TB) uint64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("no resident memory to read: %v", err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("VmRSS: %v", err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}
