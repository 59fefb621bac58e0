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

// targetRows are the measures of the rows that carry the targets.
var targetRows = []string{
	"ratio manager (new controller)/raw", "replacement beyond", "ratio manager/plain of the p50s", "ratio manager/plain of the p99s",
	"create calls", "start-first: ratio manager/Swarm", "stop-first: ratio manager/Swarm",
	"running: ratio manager (new controller)/raw", "healthy: ratio manager (new controller)/raw",
	"pulled: ratio manager (new controller)/raw",
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
			Pull:   goodPull(),
		},
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
	bad.Docker.Rollouts[0].Manager = ms(4200, 4201)
	bad.Docker.Rollouts[1].Manager = ms(3001)
	bad.Docker.Health.ManagerUp = ms(1051)
	bad.Docker.Health.ManagerHealthy = ms(2101)
	bad.Docker.Pull.ManagerUp = ms(2101)
	wantVerdicts(t, BuildRows(bad), Missed, targetRows...)
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

func TestOnlyKeepsTheRowsOfThePartsItNames(t *testing.T) {
	r := goodResults()
	r.Config.Only = []string{PartRollout}
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

func TestConvergenceRows(t *testing.T) {
	d := goodResults().Docker
	d.ManagerCurves = []Durations{ms(100, 1000)}
	d.RawCurves = []Durations{ms(100, 1000)}
	rows := convergenceRows(d)
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

func TestUnmeasuredPartsMissNothing(t *testing.T) {
	rows := BuildRows(&Results{Docker: &DockerResults{Replicas: 30}})
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
