package bench

// This file is the nodes part's subprocess: the leader's scheduler
// (leader.NewReplicationManager) alone, on the real etcd that runs in the parent,
// so that this process's resident memory is the scheduler's and its etcd
// client's, and its CPU profiles show the scheduler only. The parent
// writes the specs, registers the simulated nodes and watches the
// assignments; this process only schedules.
//
// It prints one JSON line on stdout when the scheduler starts (the time
// just before Run), then reads commands from stdin, one per line, and
// answers each with one JSON line:
//
//	profile NAME   stop the CPU profile that runs and start nodes-NAME.pprof
//	stop-profile   stop the CPU profile that runs
//	mem            read the resident memory, GC, read it again, write a heap profile
//	cpu            the process's CPU time so far (user and system)
//	stats          the slots and reported containers the scheduler counts over all nodes
//
// The CPU profile --first-profile runs from the start. End of input stops the
// scheduler; the process exits with what Run returned.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// NodesWorkerCommand is the hidden subcommand that runs RunNodesWorker.
const NodesWorkerCommand = "nodes-worker"

// nodesWorkerStarted is the worker's first line.
type nodesWorkerStarted struct {
	// Started is when Run was called, in Unix nanoseconds: the parent's
	// watch times the assignments from it (both clocks are this host's).
	Started int64  `json:"startedUnixNano"`
	PID     int    `json:"pid"`
	Profile string `json:"profile"`
}

// nodesWorkerReply answers one command.
type nodesWorkerReply struct {
	Error   string        `json:"error,omitempty"`
	Profile string        `json:"profile,omitempty"`
	Memory  *MemoryResult `json:"memory,omitempty"`
	Heap    string        `json:"heap,omitempty"`
	// CPU is the process's user and system time (cpu).
	CPU time.Duration `json:"cpuNs,omitempty"`
	// Assigned and Containers are the sums of the scheduler's NodeStats
	// (stats): the slots assigned and the containers reported.
	Assigned   int `json:"assigned,omitempty"`
	Containers int `json:"containers,omitempty"`
}

// RunNodesWorker parses the worker's flags and schedules until its input
// ends.
func RunNodesWorker(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	fs := pflag.NewFlagSet(NodesWorkerCommand, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	etcdURL := fs.String("etcd", "", "etcd client URL")
	prefix := fs.String("prefix", "/rm-bench/nodes", "registry prefix")
	profileDir := fs.String("profile-dir", "", "where the pprof profiles go")
	grace := fs.Duration("node-grace", 100*time.Millisecond, "SchedulerOptions.NodeGrace")
	syncPeriod := fs.Duration("sync-period", time.Second, "SchedulerOptions.SyncPeriod")
	firstProfile := fs.String("first-profile", "first", "name of the CPU profile that runs from the start")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *etcdURL == "" || *profileDir == "" {
		return errors.New("nodes-worker: --etcd and --profile-dir are required")
	}
	// the client's own log of retries (the puts cancelled at the stop)
	// would drown the progress output; its failures reach the scheduler
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{*etcdURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer client.Close()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("in", "nodes-worker")
	sched := leader.NewReplicationManager(registry.NewStore(client, *prefix), logger,
		leader.Options{NodeGrace: *grace, SyncPeriod: *syncPeriod})

	prof := &profiler{dir: *profileDir, sched: sched}
	defer func() { err = errors.Join(err, prof.stop()) }()
	first, err := prof.start(*firstProfile)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	enc := json.NewEncoder(stdout)
	started := time.Now()
	go func() { done <- sched.Run(runCtx) }()
	if err := enc.Encode(nodesWorkerStarted{Started: started.UnixNano(), PID: os.Getpid(), Profile: first}); err != nil {
		return err
	}

	commands := make(chan string)
	go func() {
		defer close(commands)
		lines := bufio.NewScanner(stdin)
		for lines.Scan() {
			commands <- lines.Text()
		}
	}()
	for {
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("scheduler stopped")
			}
			return fmt.Errorf("nodes-worker: %w", err)
		case line, ok := <-commands:
			if !ok {
				cancel()
				return <-done
			}
			if err := enc.Encode(prof.command(line)); err != nil {
				return err
			}
		}
	}
}

// profiler runs one CPU profile at a time and answers the commands.
type profiler struct {
	dir   string
	file  *os.File
	sched *leader.ReplicationManager
}

func (p *profiler) command(line string) nodesWorkerReply {
	verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	var r nodesWorkerReply
	var err error
	switch verb {
	case "profile":
		r.Profile, err = p.start(arg)
	case "stop-profile":
		err = p.stop()
	case "mem":
		r.Memory, r.Heap, err = p.memory()
	case "cpu":
		r.CPU, err = selfCPU()
	case "stats":
		for _, n := range p.sched.NodeStats() {
			r.Assigned += n.Assigned
			r.Containers += n.Containers
		}
	default:
		err = fmt.Errorf("unknown command %q", line)
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// start stops the profile that runs and starts nodes-<name>.pprof.
func (p *profiler) start(name string) (string, error) {
	if err := p.stop(); err != nil {
		return "", err
	}
	file := filepath.Join(p.dir, "nodes-"+name+".pprof")
	f, err := os.Create(file)
	if err != nil {
		return "", fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return "", fmt.Errorf("cpu profile: %w", err)
	}
	p.file = f
	return file, nil
}

func (p *profiler) stop() error {
	if p.file == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.file.Close()
	p.file = nil
	return err
}

// memory reads VmRSS and VmHWM, then again after a GC that returns free
// memory to the OS, and writes a heap profile.
func (p *profiler) memory() (*MemoryResult, string, error) {
	var m MemoryResult
	var err error
	if m.RSS, m.PeakRSS, err = readSelfRSS(); err != nil {
		return nil, "", err
	}
	var ms runtime.MemStats
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&ms)
	m.HeapInuse = ms.HeapInuse
	if m.RSSAfterGC, _, err = readSelfRSS(); err != nil {
		return nil, "", err
	}
	heap := filepath.Join(p.dir, "nodes-heap.pprof")
	return &m, heap, writeHeapProfile(heap)
}

// selfCPU is this process's user and system time so far.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
