package bench

import (
	"slices"
	"testing"
)

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/replication-manager/replication-manager/registry
cpu: AMD EPYC
BenchmarkSyncReplicationController/steady-10-2   	   52342	     22871 ns/op	    7321 B/op	      98 allocs/op
BenchmarkRankForDeletion/tasks=1000-2            	    2138	    561234 ns/op	  245760 B/op	       3 allocs/op
BenchmarkNoMem-2 	 1000	 1.5 ns/op
PASS
ok  	github.com/replication-manager/replication-manager/registry	5.123s
`
	got := parseGoBench(out)
	want := []GoBenchmark{
		{Name: "BenchmarkSyncReplicationController/steady-10", Iterations: 52342, NsPerOp: 22871, BytesPerOp: 7321, AllocsPerOp: 98},
		{Name: "BenchmarkRankForDeletion/tasks=1000", Iterations: 2138, NsPerOp: 561234, BytesPerOp: 245760, AllocsPerOp: 3},
		{Name: "BenchmarkNoMem", Iterations: 1000, NsPerOp: 1.5},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseGoBench =\n%+v\nwant\n%+v", got, want)
	}
}

func TestTrimProcs(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkA-2":           "BenchmarkA",
		"BenchmarkA/steady-10":   "BenchmarkA/steady",
		"BenchmarkA/x-y":         "BenchmarkA/x-y",
		"BenchmarkA":             "BenchmarkA",
		"BenchmarkA/steady-10-2": "BenchmarkA/steady-10",
	} {
		if got := trimProcs(in); got != want {
			t.Errorf("trimProcs(%q) = %q, want %q", in, got, want)
		}
	}
}
