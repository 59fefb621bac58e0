package bench

// This file runs the Go benchmarks of the registry's packages (one host's
// sync of a steady controller on the node and on the leader, a decision,
// a relist) and reads their results.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// GoBenchPackages are the packages whose benchmarks the go-bench part runs.
const GoBenchPackages = "./registry/..."

// runGoBench runs `go test ./registry/... -run '^$' -bench pattern
// -benchmem` and keeps its output in outFile.
func runGoBench(ctx context.Context, pattern, outFile string) ([]GoBenchmark, error) {
	cmd := exec.CommandContext(ctx, "go", "test", GoBenchPackages, "-run", "^$", "-bench", pattern, "-benchmem", "-count", "1", "-timeout", "10m")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if err := os.WriteFile(outFile, out.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("go benchmarks: %w", err)
	}
	if runErr != nil {
		return nil, fmt.Errorf("go test -bench: %w (output in %s)", runErr, outFile)
	}
	return parseGoBench(out.String()), nil
}

// parseGoBench reads the result lines of `go test -bench -benchmem`, such
// as "BenchmarkSync/steady-2  100000  11234 ns/op  2048 B/op  31 allocs/op".
// The -GOMAXPROCS suffix is dropped from the name.
func parseGoBench(out string) []GoBenchmark {
	var res []GoBenchmark
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		b := GoBenchmark{Name: trimProcs(f[0]), Iterations: iters}
		for i := 2; i+1 < len(f); i += 2 {
			v, unit := f[i], f[i+1]
			switch unit {
			case "ns/op":
				b.NsPerOp, _ = strconv.ParseFloat(v, 64)
			case "B/op":
				b.BytesPerOp, _ = strconv.ParseInt(v, 10, 64)
			case "allocs/op":
				b.AllocsPerOp, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		res = append(res, b)
	}
	return res
}

// trimProcs drops the "-2" that go test appends for GOMAXPROCS.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}
