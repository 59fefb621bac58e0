package api

import (
	"strings"
	"testing"
)

func TestParseNodeReserveTakesTheKubeletsQuantities(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want NodeReserved
	}{
		{"", NodeReserved{}},
		{"memory=512Mi", NodeReserved{Memory: 512 << 20}},
		{"memory=512MiB", NodeReserved{Memory: 512 << 20}},
		{"memory=1Gi,cpu=500m", NodeReserved{Memory: 1 << 30, CPUs: 0.5}},
		{" cpu = 1.5 , memory = 1GiB ", NodeReserved{Memory: 1 << 30, CPUs: 1.5}},
		{"memory=1G", NodeReserved{Memory: 1_000_000_000}},
		{"memory=1GB", NodeReserved{Memory: 1_000_000_000}},
		{"memory=1.5Gi", NodeReserved{Memory: 3 << 29}},
		{"memory=4096", NodeReserved{Memory: 4096}},
		{"cpu=2", NodeReserved{CPUs: 2}},
		{"cpu=0", NodeReserved{}},
		{"cpu=100m", NodeReserved{CPUs: 0.1}},
	} {
		got, err := ParseNodeReserve(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseNodeReserve(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseNodeReserveNamesTheBadItem(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"memory", `"memory": want memory=QUANTITY or cpu=QUANTITY`},
		{"memory=", `"memory=": want`},
		{"=1Gi", `"=1Gi": want`},
		{"cpu=1,disk=1Gi", `"disk=1Gi": unknown resource "disk"`},
		{"memory=1Gi,memory=2Gi", `"memory=2Gi": memory given twice`},
		{"memory=lots", `"memory=lots": not a quantity of memory`},
		{"memory=512m", `"memory=512m": not a whole number of bytes`},
		{"memory=-1Gi", `"memory=-1Gi": must not be negative`},
		{"memory=100Ei", `"memory=100Ei": too large`},
		{"memory=1Gi,cpu=half", `"cpu=half": not a quantity of CPU`},
		{"cpu=-500m", `"cpu=-500m": must not be negative`},
		{"memory=1XB", `"memory=1XB": not a quantity of memory`},
	} {
		_, err := ParseNodeReserve(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseNodeReserve(%q) error %v, want it to say %s", tt.in, err, tt.want)
		}
	}
}

func TestNodeReservedCPUSharesRoundUp(t *testing.T) {
	for _, tt := range []struct {
		cpus float64
		want int64
	}{{0, 0}, {0.5, 512}, {1.5, 1536}, {0.1, 103}, {2, 2048}} {
		if got := (NodeReserved{CPUs: tt.cpus}).CPUShares(); got != tt.want {
			t.Errorf("%g cores = %d shares, want %d", tt.cpus, got, tt.want)
		}
	}
}

func TestCheckReserveRefusesAReserveThatLeavesNothing(t *testing.T) {
	c := NodeCapacity{CPUs: 2, Memory: 4 << 30}
	if err := (NodeReserved{CPUs: 1.5, Memory: 3 << 30}).CheckReserve(c); err != nil {
		t.Errorf("a reserve under the capacity: %v", err)
	}
	if err := (NodeReserved{CPUs: 8, Memory: 1 << 40}).CheckReserve(NodeCapacity{}); err != nil {
		t.Errorf("a capacity the engine did not tell is not checked: %v", err)
	}
	err := (NodeReserved{Memory: 5 << 30}).CheckReserve(c)
	if err == nil || !strings.Contains(err.Error(), "memory 5GiB is not less than the node's 4GiB") {
		t.Errorf("memory over the capacity: %v", err)
	}
	err = (NodeReserved{CPUs: 2}).CheckReserve(c)
	if err == nil || !strings.Contains(err.Error(), "cpu 2 is not less than the node's 2 CPUs") || strings.Contains(err.Error(), "memory") {
		t.Errorf("all the CPUs: %v", err)
	}
}
