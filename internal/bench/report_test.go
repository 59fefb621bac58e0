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

// wantVerdicts checks the verdict of the first row whose measure contains
// each of whats.
func wantVerdicts(t *testing.T, rows []Row, want Verdict, whats ...string) {
	t.Helper()
	for _, what := range whats {
		if got := verdictOf(t, rows, what); got != want {
			t.Errorf("%s: verdict %v, want %v", what, got, want)
		}
	}
}

// targeted are the rows with a target.
func targeted(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Target != "" {
			out = append(out, r)
		}
	}
	return out
}

// targetRows are the measures of the rows that carry the issue's targets.
var targetRows = []string{
	"ratio manager (new controller)/raw", "replacement beyond", "ratio manager/plain of the p50s", "ratio manager/plain of the p99s",
	"the node's full resync", "every status says all replicas ready", "the node's first create call", "while the node's full resyncs run", "resident memory of the host's process", "create calls",
	"start-first: ratio manager/Swarm", "stop-first: ratio manager/Swarm", "while every controller rolls out",
	"first assignment", "reassignment of a dead node: ", "steady state", "a steady period",
	"running: ratio manager (new controller)/raw", "healthy: ratio manager (new controller)/raw",
}

// repeat returns n samples of v ms.
func repeat(n, v int) Durations {
	out := make(Durations, n)
	for i := range out {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

// goodResults meets every target.
func goodResults() *Results {
	return &Results{
		Docker: &DockerResults{
			Replicas: 30, ManagerUp: ms(1000, 1100, 1050), RawUp: ms(1000, 1000, 1000),
			ManagerDown: ms(500), RawDown: ms(500), SwarmUp: ms(1500), SwarmDown: ms(700),
			DockerStart: ms(300), Replacement: ms(390, 400),
			EndToEnd: repeat(20, 320), EndToEndRunning: repeat(20, 300), EndToEndStatus: repeat(20, 320), EndToEndPlain: repeat(20, 300),
			Failure:         &FailureResult{Replicas: 100, Window: time.Minute, CreateErrors: 6},
			RolloutReplicas: 10,
			Rollouts: []RolloutResult{
				{Strategy: "start-first", Manager: ms(4000, 4200), Swarm: ms(4100, 4100)},
				{Strategy: "stop-first", Manager: ms(3000), Swarm: ms(3000)},
			},
			Health: goodHealth(),
		},
		Scale: []ScaleResult{{
			Controllers: 10000, Replicas: 10, Resync: ms(900, 950, 1200),
			ConvergeStatuses: 12 * time.Second,
			Steady:           SteadyPeriod{Period: 30 * time.Second, Writes: 10, CPU: 200 * time.Millisecond},
			EventToCreate:    ms(1, 2, 9), EventToCreateBusy: ms(2, 49), BareMemory: &MemoryResult{RSS: 280 << 20},
			Rollout: &ScaleRollout{EventToCreate: append(repeat(19, 2), ms(10)...)},
		}},
		Nodes: goodNodes(),
	}
}

// goodNodes meets the nodes part's targets.
func goodNodes() *NodesResult {
	return &NodesResult{
		Controllers: 10000, Replicas: 10, Nodes: 100, NodeGrace: 100 * time.Millisecond, SyncPeriod: time.Second, IdleSyncPeriod: time.Hour,
		FirstAssignment: 5 * time.Second, Assignments: 100000, SlotsPerNodeMin: 1000, SlotsPerNodeMax: 1000, FirstPass: 10 * time.Second,
		Memory:        &MemoryResult{RSS: 100 << 20},
		Reassign:      &NodeReassignment{Node: "node-000", Slots: 1000, Took: time.Second, Writes: 1000},
		RestartListed: 5 * time.Second, SteadyWindow: 4 * time.Second, SteadyPeriods: 3, SteadyPasses: 3,
		ReassignBusy: &NodeReassignment{Node: "node-010", Slots: 1010, Took: 4 * time.Second, Writes: 1010},
	}
}

func TestBuildRowsJudgesEveryTarget(t *testing.T) {
	rows := BuildRows(goodResults())
	wantVerdicts(t, rows, Met, targetRows...)
	if n := len(targeted(rows)); n != len(targetRows) {
		t.Errorf("%d rows with a target, want %d", n, len(targetRows))
	}

	bad := goodResults()
	bad.Docker.ManagerUp = ms(1200)
	bad.Docker.Replacement = ms(401)
	bad.Docker.EndToEnd = append(repeat(19, 340), ms(400)...)
	bad.Docker.Failure.CreateErrors = 11
	bad.Scale[0].Resync = ms(1100)
	bad.Scale[0].ConvergeStatuses = 12*time.Second + 1
	bad.Scale[0].Steady.Writes = 11
	bad.Scale[0].EventToCreate = ms(1, 11)
	bad.Scale[0].EventToCreateBusy = ms(2, 51)
	bad.Scale[0].BareMemory.RSS = 500 << 20
	bad.Docker.Rollouts[0].Manager = ms(4200, 4201)
	bad.Docker.Rollouts[1].Manager = ms(3001)
	bad.Scale[0].Rollout.EventToCreate = append(repeat(19, 2), ms(11)...)
	bad.Nodes.FirstAssignment = 5*time.Second + 1
	bad.Nodes.Reassign.Took = time.Second + 1
	bad.Nodes.SteadyWrites = 1
	bad.Docker.Health.ManagerUp = ms(1051)
	bad.Docker.Health.ManagerHealthy = ms(2101)
	wantVerdicts(t, BuildRows(bad), Missed, targetRows...)
}

func TestASteadyPeriodMissesOnCPUAlone(t *testing.T) {
	r := goodResults()
	r.Scale[0].Steady.CPU = 200*time.Millisecond + 1
	if got := verdictOf(t, BuildRows(r), "a steady period"); got != Missed {
		t.Errorf("a steady period over its CPU: verdict %v, want missed", got)
	}
}

func TestWithoutSwarmItsComparisonsAreNotAvailable(t *testing.T) {
	r := goodResults()
	r.Docker.Swarm = "not available: no swarm here"
	r.Docker.SwarmUp, r.Docker.SwarmDown = nil, nil
	for i := range r.Docker.Rollouts {
		r.Docker.Rollouts[i].Swarm = nil
	}
	rows := BuildRows(r)
	for _, what := range []string{"Swarm", "start-first: ratio manager/Swarm", "stop-first: ratio manager/Swarm"} {
		if got := verdictOf(t, rows, what); got != NotAvailable {
			t.Errorf("%s: verdict %v, want n/a", what, got)
		}
	}
	if hasMeasure(rows, "Swarm, service update") {
		t.Errorf("Swarm's rolling-update rows without Swarm: %+v", rows)
	}
}

func TestRolloutTargetIsTheManagerAtMostSwarm(t *testing.T) {
	tests := []struct {
		name           string
		manager, swarm Durations
		want           Verdict
	}{
		{"equal medians", ms(3000, 5000, 4000), ms(4000), Met},
		{"faster", ms(2000), ms(4000), Met},
		{"a millisecond slower", ms(4001), ms(4000), Missed},
		{"no manager sample", nil, ms(4000), NotAvailable},
		{"no Swarm sample", ms(4000), nil, NotAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := rolloutRows(&DockerResults{RolloutReplicas: 10, Rollouts: []RolloutResult{{Strategy: "stop-first", Manager: tt.manager, Swarm: tt.swarm}}})
			if got := verdictOf(t, rows, "stop-first: ratio manager/Swarm"); got != tt.want {
				t.Errorf("verdict %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRolloutRowsOfAFailedPartNameEveryStrategy(t *testing.T) {
	rows := rolloutRows(&DockerResults{RolloutReplicas: 10})
	for _, s := range rolloutStrategies() {
		if got := verdictOf(t, rows, s.name+": ratio manager/Swarm"); got != NotAvailable {
			t.Errorf("%s without samples: verdict %v, want n/a", s.name, got)
		}
	}
}

func TestScaleRolloutTargetNeedsEnoughProbes(t *testing.T) {
	tests := []struct {
		name  string
		probe Durations
		want  Verdict
	}{
		{"p99 at the bound", append(repeat(19, 1), ms(10)...), Met},
		{"p99 over", append(repeat(19, 1), ms(11)...), Missed},
		{"too few for a p99", repeat(19, 1), NotAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// judged at whatever count it was measured, 1000 by default
			rows := scaleRows([]ScaleResult{{Controllers: 1000, Replicas: 10, Rollout: &ScaleRollout{EventToCreate: tt.probe}}})
			if got := verdictOf(t, rows, "while every controller rolls out"); got != tt.want {
				t.Errorf("verdict %v, want %v", got, tt.want)
			}
			for _, r := range rows {
				if r.Target != "" && !strings.Contains(r.Measure, "while every controller rolls out") {
					t.Errorf("1000 controllers: %q has target %q; only the rollout's is judged there", r.Measure, r.Target)
				}
			}
		})
	}
}

func TestNodesTargetsOfSizeApplyAtTheIssuesSizeOnly(t *testing.T) {
	n := goodNodes()
	n.Controllers, n.Assignments = 1000, 10000
	n.FirstAssignment, n.Reassign.Took, n.SteadyWrites = time.Minute, time.Minute, 3
	for _, r := range nodesRows(n) {
		switch {
		case strings.HasPrefix(r.Measure, "steady state"):
			if r.Verdict != Missed {
				t.Errorf("3 writes in the steady state at 1000 controllers: verdict %v, want MISSED (its target holds at any size)", r.Verdict)
			}
		case r.Target != "" || r.Verdict != Info:
			t.Errorf("1000 controllers: %q has target %q, verdict %v; want none", r.Measure, r.Target, r.Verdict)
		}
	}
}

func TestNodesRowsOfAFailedPartMissNothing(t *testing.T) {
	n := &NodesResult{Controllers: 10000, Replicas: 10, Nodes: 100}
	for _, what := range []string{"first assignment", "reassignment of a dead node: ", "steady state"} {
		if got := verdictOf(t, nodesRows(n), what); got != NotAvailable {
			t.Errorf("%s unmeasured: verdict %v, want n/a", what, got)
		}
	}
	n.FirstAssignment = time.Second // measured, then the part failed
	if got := verdictOf(t, nodesRows(n), "first assignment"); got != Met {
		t.Errorf("first assignment of 1s: verdict %v, want met", got)
	}
}

func TestEveryTargetedNodesRowHasAProfile(t *testing.T) {
	for _, r := range nodesRows(goodNodes()) {
		if r.Target != "" && nodesProfileOf(r.Measure) == "" {
			t.Errorf("%q: no profile explains it when missed", r.Measure)
		}
	}
}

func TestOnlyKeepsTheRowsOfThePartsItNames(t *testing.T) {
	r := goodResults()
	r.Config.Only = []string{PartRollout}
	r.Scale = nil
	for _, row := range BuildRows(r) {
		if !strings.HasPrefix(row.Part, "6. Rolling update") {
			t.Errorf("--only rollout: row %q of part %q", row.Measure, row.Part)
		}
	}
}

func TestReplacementTargetIs100msBeyondOneStart(t *testing.T) {
	for _, tt := range []struct {
		replacement int
		want        Verdict
	}{{400, Met}, {401, Missed}} {
		d := goodResults().Docker
		d.Replacement = ms(tt.replacement)
		if got := verdictOf(t, replacementRows(d), "replacement beyond"); got != tt.want {
			t.Errorf("replacement %dms after a 300ms start: verdict %v, want %v", tt.replacement, got, tt.want)
		}
	}
}

func TestEndToEndJudgesTheP50AndTheP99Apart(t *testing.T) {
	tests := []struct {
		name     string
		manager  Durations
		plain    Durations
		p50, p99 Verdict
	}{
		{"both at their bound", append(repeat(19, 330), ms(390)...), repeat(20, 300), Met, Met},
		{"p50 over", repeat(20, 331), repeat(20, 300), Missed, Met},
		{"p99 over: one slow try of 20", append(repeat(19, 300), ms(391)...), repeat(20, 300), Met, Missed},
		{"a slow plain start widens the p99's room", append(repeat(19, 300), ms(600)...), append(repeat(19, 300), ms(500)...), Met, Met},
		{"too few samples for a p99", repeat(19, 300), repeat(19, 300), Met, NotAvailable},
		{"no plain samples", repeat(20, 300), nil, NotAvailable, NotAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := endToEndRows(&DockerResults{EndToEnd: tt.manager, EndToEndPlain: tt.plain})
			if got := verdictOf(t, rows, "of the p50s"); got != tt.p50 {
				t.Errorf("p50 ratio: verdict %v, want %v", got, tt.p50)
			}
			if got := verdictOf(t, rows, "of the p99s"); got != tt.p99 {
				t.Errorf("p99 ratio: verdict %v, want %v", got, tt.p99)
			}
		})
	}
}

func TestScaleTargetsApplyAt10000ControllersOnly(t *testing.T) {
	rows := BuildRows(&Results{Scale: []ScaleResult{{
		Controllers: 1000, Resync: ms(5000), EventToCreate: ms(100), EventToCreateBusy: ms(1000), BareMemory: &MemoryResult{RSS: 1 << 30},
	}}})
	for _, r := range rows {
		if r.Target != "" || r.Verdict != Info {
			t.Errorf("1000 controllers: %q has target %q, verdict %v; want none", r.Measure, r.Target, r.Verdict)
		}
	}
}

func TestEveryTargetedScaleRowHasAProfile(t *testing.T) {
	for _, r := range BuildRows(&Results{Scale: goodResults().Scale}) {
		if r.Target == "" {
			continue
		}
		if part, _ := profileOf(r.Measure); part == "" {
			t.Errorf("%q: no profile explains it when missed", r.Measure)
		}
	}
}

func TestConvergenceRows(t *testing.T) {
	d := goodResults().Docker
	d.ManagerCurves = []Durations{ms(100, 1000)}
	d.RawCurves = []Durations{ms(100, 1000)}
	if rows := convergenceRows(d); hasMeasure(rows, "proven template") {
		t.Errorf("proven-template rows without its samples: %+v", rows)
	}
	d.ManagerProvenUp = ms(900, 1000, 1100)
	d.ManagerProvenCurves = []Durations{ms(100, 900)}
	rows := convergenceRows(d)
	if !hasMeasure(rows, "proven template") {
		t.Fatalf("no proven-template rows: %+v", rows)
	}
	for _, r := range rows {
		if strings.Contains(r.Measure, "proven template") && (r.Target != "" || r.Verdict != Info) {
			t.Errorf("%q has target %q: the proven template has none", r.Measure, r.Target)
		}
	}
	if got := verdictOf(t, rows, "ratio manager (new controller)/raw"); got != Met {
		t.Errorf("new-controller ratio 1.05: verdict %v, want met", got)
	}
}

// hasMeasure reports whether a row's measure contains what.
func hasMeasure(rows []Row, what string) bool {
	for _, r := range rows {
		if strings.Contains(r.Measure, what) {
			return true
		}
	}
	return false
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
	rows := BuildRows(&Results{Docker: &DockerResults{Replicas: 30}, Scale: []ScaleResult{{Controllers: 10000, Rollout: &ScaleRollout{}}}})
	for _, r := range rows {
		if r.Verdict == Missed {
			t.Errorf("%s: MISSED without a sample", r.Measure)
		}
	}
}

func TestMissingImageWindowShorterThanAMinuteCanOnlyMiss(t *testing.T) {
	tests := []struct {
		window  time.Duration
		creates int
		want    Verdict
	}{
		{time.Minute, 10, Met},
		{time.Minute, 11, Missed},
		{15 * time.Second, 6, NotAvailable},
		{15 * time.Second, 11, Missed},
	}
	for _, tt := range tests {
		rows := failureRows(&FailureResult{Replicas: 100, Window: tt.window, CreateErrors: tt.creates})
		if got := verdictOf(t, rows, "create calls"); got != tt.want {
			t.Errorf("%d creates in %s: verdict %v, want %v", tt.creates, tt.window, got, tt.want)
		}
	}
}

func TestFmtCallsShowsFractionsOfARound(t *testing.T) {
	if got, want := fmtCalls(map[string]float64{"list": 0.5, "create": 30, "inspect": 90.3333}), "create 30, inspect 90.3, list 0.5"; got != want {
		t.Errorf("fmtCalls = %q, want %q", got, want)
	}
	if got := fmtCalls(nil); got != "none" {
		t.Errorf("fmtCalls(nil) = %q, want none", got)
	}
}

func TestFmtPeriodAndSlots(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "1h", 90 * time.Minute: "1h30m", time.Minute: "1m", 90 * time.Second: "1m30s",
		time.Second: "1s", 100 * time.Millisecond: "100ms"} {
		if got := fmtPeriod(d); got != want {
			t.Errorf("fmtPeriod(%v) = %q, want %q", d, got, want)
		}
	}
	if got := fmtSlots(1000, 1000); got != "1000 slots" {
		t.Errorf("fmtSlots(1000, 1000) = %q", got)
	}
	if got := fmtSlots(1000, 1012); got != "1000-1012 slots" {
		t.Errorf("fmtSlots(1000, 1012) = %q", got)
	}
}

func TestConvergenceRowsJudgeTheInspects(t *testing.T) {
	d := goodResults().Docker
	for _, tt := range []struct {
		inspects float64
		want     Verdict
	}{{0, Met}, {float64(d.Replicas), Met}, {3 * float64(d.Replicas), Missed}} {
		d.ManagerDockerCalls = map[string]float64{"create": float64(d.Replicas), "inspect": tt.inspects}
		if got := verdictOf(t, convergenceRows(d), "inspects per 0→"); got != tt.want {
			t.Errorf("%.0f inspects per round of %d replicas: verdict %v, want %v", tt.inspects, d.Replicas, got, tt.want)
		}
	}
}
