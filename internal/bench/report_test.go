package bench

import (
	"strings"
	"testing"
	"time"
)

// verdictOf returns the verdict of the first row whose measure contains
// what.
func verdictOf(t *testing.T, rows []Row, what string) Verdict {
	t.Helper()
	for _, r := range rows {
		if strings.Contains(r.Measure, what) {
			return r.Verdict
		}
	}
	t.Fatalf("no row %q in %+v", what, rows)
	return Info
}

func TestBuildRowsJudgesEveryTarget(t *testing.T) {
	good := &Results{
		Docker: &DockerResults{
			Replicas: 30, ManagerUp: ms(1000, 1100, 1050), RawUp: ms(1000, 1000, 1000),
			ManagerDown: ms(500), RawDown: ms(500), Swarm: "not available: no swarm here",
			DockerStart: ms(300), Replacement: ms(900, 1200),
			EndToEnd: ms(400, 1900), EndToEndRunning: ms(400), EndToEndStatus: ms(400),
			Failure: &FailureResult{Replicas: 100, Window: time.Minute, CreateErrors: 6},
		},
		Scale: []ScaleResult{{
			Controllers: 10000, Replicas: 10, Resync: ms(900, 950, 1200),
			EventToCreate: ms(1, 2, 9), BareMemory: &MemoryResult{RSS: 280 << 20},
		}},
	}
	rows := BuildRows(good)
	for _, what := range []string{"ratio manager/raw", "replacement beyond", "readyReplicas 1", "full resync", "watch event", "resident memory of the manager's process", "create calls"} {
		if got := verdictOf(t, rows, what); got != Met {
			t.Errorf("%s: verdict %v, want met", what, got)
		}
	}
	if got := verdictOf(t, rows, "Swarm"); got != NotAvailable {
		t.Errorf("Swarm: verdict %v, want n/a", got)
	}

	bad := good
	bad.Docker.ManagerUp = ms(1200)
	bad.Docker.Replacement = ms(1400)
	bad.Docker.EndToEnd = ms(400, 2100)
	bad.Docker.Failure.CreateErrors = 11
	bad.Scale[0].Resync = ms(1100)
	bad.Scale[0].EventToCreate = ms(1, 11)
	bad.Scale[0].BareMemory.RSS = 500 << 20
	rows = BuildRows(bad)
	for _, what := range []string{"ratio manager/raw", "replacement beyond", "readyReplicas 1", "full resync", "watch event", "resident memory of the manager's process", "create calls"} {
		if got := verdictOf(t, rows, what); got != Missed {
			t.Errorf("%s: verdict %v, want MISSED", what, got)
		}
	}
}

func TestResyncTargetAppliesAt10000Controllers(t *testing.T) {
	rows := BuildRows(&Results{Scale: []ScaleResult{{Controllers: 1000, Resync: ms(5000)}}})
	if got := verdictOf(t, rows, "full resync"); got != Info {
		t.Errorf("resync of 1000 controllers: verdict %v, want none", got)
	}
}

func TestRenderTextNamesEachPartOnce(t *testing.T) {
	out := RenderText([]Row{
		{Part: "A", Measure: "one", Result: "1"},
		{Part: "A", Measure: "two", Result: "2", Target: "≤ 3", Verdict: Met},
		{Part: "B", Measure: "three", Result: "3"},
	})
	if n := strings.Count(out, "A "); n != 1 {
		t.Errorf("part A named %d times:\n%s", n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space in %q", line)
		}
	}
}

func TestSpliceDocKeepsTheHandWrittenParts(t *testing.T) {
	existing := "# Benchmarks\n\nintro\n\n" + docBegin + "\nold table\n" + docEnd + "\n\n## Analysis\n\nkept\n"
	got := SpliceDoc(existing, docBegin+"\nnew table\n"+docEnd)
	want := "# Benchmarks\n\nintro\n\n" + docBegin + "\nnew table\n" + docEnd + "\n\n## Analysis\n\nkept\n"
	if got != want {
		t.Errorf("SpliceDoc =\n%s\nwant\n%s", got, want)
	}
}

func TestSpliceDocStartsFromTheSkeleton(t *testing.T) {
	got := SpliceDoc("", docBegin+"\nnew table\n"+docEnd)
	if !strings.HasPrefix(got, "# Benchmarks") || !strings.Contains(got, "new table") || !strings.Contains(got, "## Analysis") {
		t.Errorf("SpliceDoc of nothing =\n%s", got)
	}
}

func TestCurves(t *testing.T) {
	curves := []Durations{ms(1, 2, 3, 4, 5, 6, 7, 8), ms(3, 4, 5, 6, 7, 8, 9, 10), ms(2, 3, 4, 5, 6, 7, 8, 30)}
	if got, want := fmtCurve(medianCurve(curves)), "#1 2.00ms, #2 3.00ms, #4 5.00ms, #6 7.00ms, #8 10ms"; got != want {
		t.Errorf("median curve = %q, want %q", got, want)
	}
	if got, want := fmtCurve(ms(5)), "#1 5.00ms"; got != want {
		t.Errorf("curve of one = %q, want %q", got, want)
	}
}

func TestMedianOfRatios(t *testing.T) {
	if got := medianRatio(ms(110, 90, 300), ms(100, 100, 100)); got != 1.1 {
		t.Errorf("medianRatio = %v, want 1.1", got)
	}
}

func TestUnmeasuredPartsMissNothing(t *testing.T) {
	rows := BuildRows(&Results{Docker: &DockerResults{Replicas: 30}, Scale: []ScaleResult{{Controllers: 10000}}})
	for _, r := range rows {
		if r.Verdict == Missed {
			t.Errorf("%s: MISSED without a sample", r.Measure)
		}
	}
}
