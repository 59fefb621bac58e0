package bench

import (
	"fmt"
	"slices"
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

// hasMeasure reports whether a row's measure contains what.
func hasMeasure(rows []Row, what string) bool {
	for _, r := range rows {
		if strings.Contains(r.Measure, what) {
			return true
		}
	}
	return false
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

// repeat returns n samples of v ms.
func repeat(n, v int) Durations { return slices.Repeat(ms(v), n) }

// versus are samples of a manager-versus-raw part whose up ratio is
// manager/raw of the medians.
func versus(manager, raw Durations) ManagerVersusRaw {
	return ManagerVersusRaw{ManagerUp: manager, RawUp: raw, ManagerDown: ms(500), RawDown: ms(500)}
}

// goodResults meets every target, each ratio of the medians at most 1.05.
func goodResults() *Results {
	return &Results{
		Docker: &DockerResults{
			Replicas: 30, ManagerVersusRaw: versus(ms(1000, 1100, 1050), ms(1000, 1000, 1000)), SwarmUp: ms(1500), SwarmDown: ms(700),
			Tasks:  &TaskConvergenceResult{Replicas: 30, Containers: 2, Volumes: 1, Shape: taskShape, ManagerVersusRaw: versus(ms(2000, 2200, 2100), ms(2000))},
			Health: &HealthConvergenceResult{Replicas: 30, HealthCheck: healthCheck, ManagerVersusRaw: versus(ms(1000, 1050, 1100), ms(1000)), ManagerHealthy: ms(2100), RawHealthy: ms(2000)},
			Pull:   &PullConvergenceResult{Replicas: 30, Image: "127.0.0.1:40000/rm-bench-pull:run", ManagerVersusRaw: versus(ms(2000, 2100, 2200), ms(2000))},

			DockerStart: ms(300), Replacement: ms(390, 400),
			EndToEnd: repeat(20, 320), EndToEndRunning: repeat(20, 300), EndToEndStatus: repeat(20, 320), EndToEndPlain: repeat(20, 300),
			Failure:         &FailureResult{Replicas: 100, Window: time.Minute, CreateErrors: 6},
			RolloutReplicas: 10,
			Rollouts: []RolloutResult{
				{Strategy: "start-first", Manager: ms(4000, 4200), Swarm: ms(4100, 4100)},
				{Strategy: "stop-first", Manager: ms(3000), Swarm: ms(3000)},
			},
		},
	}
}

// targetRows are the measures of the rows that carry the issues' targets.
var targetRows = []string{
	"0→30 ratio manager (new controller)/raw", "0→30 tasks ratio manager (new controller)/raw",
	"running: ratio manager (new controller)/raw", "healthy: ratio manager (new controller)/raw", "pulled: ratio manager (new controller)/raw",
	"replacement beyond", "ratio manager/plain of the p50s", "ratio manager/plain of the p99s",
	"create calls", "start-first: ratio manager/Swarm", "stop-first: ratio manager/Swarm",
}

func TestBuildRowsJudgesEveryTarget(t *testing.T) {
	rows := BuildRows(goodResults())
	wantVerdicts(t, rows, Met, targetRows...)
	if n := len(targeted(rows)); n != len(targetRows) {
		t.Errorf("%d rows with a target, want %d", n, len(targetRows))
	}

	bad := goodResults()
	d := bad.Docker
	d.ManagerUp = ms(1200)
	d.Tasks.ManagerUp = ms(2201)
	d.Health.ManagerUp, d.Health.ManagerHealthy = ms(1051), ms(2101)
	d.Pull.ManagerUp = ms(2101)
	d.Replacement = ms(401)
	d.EndToEnd = append(repeat(19, 340), ms(400)...)
	d.Failure.CreateErrors = 11
	d.Rollouts[0].Manager = ms(4200, 4201)
	d.Rollouts[1].Manager = ms(3001)
	wantVerdicts(t, BuildRows(bad), Missed, targetRows...)
}

func TestEachRatioIsJudgedAtItsBound(t *testing.T) {
	tests := []struct {
		name    string
		measure string
		bound   float64
		// set gives the part the manager's samples against raw's (or
		// Swarm's) median
		set func(d *DockerResults, manager Durations)
		raw int
	}{
		{"convergence", "0→30 ratio manager (new controller)/raw", 1.10, func(d *DockerResults, m Durations) { d.ManagerUp = m }, 1000},
		{"tasks", "0→30 tasks ratio", 1.10, func(d *DockerResults, m Durations) { d.Tasks.ManagerUp = m }, 2000},
		{"health, running", "0→30 running: ratio", 1.05, func(d *DockerResults, m Durations) { d.Health.ManagerUp = m }, 1000},
		{"health, healthy", "0→30 healthy: ratio", 1.05, func(d *DockerResults, m Durations) { d.Health.ManagerHealthy = m }, 2000},
		{"pull", "0→30 pulled: ratio", 1.05, func(d *DockerResults, m Durations) { d.Pull.ManagerUp = m }, 2000},
		{"rolling update, start-first", "start-first: ratio manager/Swarm", 1.00, func(d *DockerResults, m Durations) { d.Rollouts[0].Manager = m }, 4100},
		{"rolling update, stop-first", "stop-first: ratio manager/Swarm", 1.00, func(d *DockerResults, m Durations) { d.Rollouts[1].Manager = m }, 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := int(tt.bound * float64(tt.raw))
			for _, c := range []struct {
				manager Durations
				want    Verdict
			}{{ms(at), Met}, {ms(at + 1), Missed}, {nil, NotAvailable}} {
				r := goodResults()
				tt.set(r.Docker, c.manager)
				rows := BuildRows(r)
				wantVerdicts(t, rows, c.want, tt.measure)
				for _, row := range rows {
					if target := fmt.Sprintf("≤ %.2f", tt.bound); strings.Contains(row.Measure, tt.measure) && row.Target != target {
						t.Errorf("%s: target %q, want %q", row.Measure, row.Target, target)
					}
				}
			}
		})
	}
}

func TestPartsNotMeasuredSaySo(t *testing.T) {
	r := goodResults()
	r.Docker.Tasks, r.Docker.Health, r.Docker.Pull = nil, nil, nil
	wantVerdicts(t, BuildRows(r), NotAvailable, "tasks", "health-checked image", "pulled image")
}

func TestInspectsAreJudgedPerReplica(t *testing.T) {
	for _, tt := range []struct {
		inspects float64
		want     Verdict
	}{{0, Met}, {30, Met}, {30.5, Missed}, {90, Missed}} {
		r := goodResults()
		calls := map[string]float64{"create": 30, "inspect": tt.inspects}
		r.Docker.ManagerDockerCalls, r.Docker.Health.ManagerDockerCalls = calls, calls
		if got := verdictOf(t, convergenceRows(r.Docker), "inspects per 0→30→0"); got != tt.want {
			t.Errorf("convergence: %.1f inspects per round of 30 replicas: verdict %v, want %v", tt.inspects, got, tt.want)
		}
		if got := verdictOf(t, healthRows(r.Docker), "inspects per 0→30→0"); got != tt.want {
			t.Errorf("health: %.1f inspects per round of 30 replicas: verdict %v, want %v", tt.inspects, got, tt.want)
		}
	}
	if hasMeasure(healthRows(goodResults().Docker), "inspects per") {
		t.Error("an inspects row without the daemon's calls")
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
	wantVerdicts(t, rows, NotAvailable, "Swarm", "start-first: ratio manager/Swarm", "stop-first: ratio manager/Swarm")
	if hasMeasure(rows, "Swarm, service update") || hasMeasure(rows, "Swarm (service rm)") {
		t.Errorf("Swarm's rows without Swarm: %+v", rows)
	}
}

func TestRolloutRowsOfAFailedPartNameEveryStrategy(t *testing.T) {
	rows := rolloutRows(&DockerResults{RolloutReplicas: 10})
	wantVerdicts(t, rows, NotAvailable, "start-first: ratio manager/Swarm", "stop-first: ratio manager/Swarm")
}

func TestOnlyKeepsTheRowsOfThePartsItNames(t *testing.T) {
	for part, prefix := range map[string]string{
		PartConvergence: "1. Convergence", PartTasks: "1b. ", PartHealth: healthPart, PartPull: pullPart, PartReplacement: "2. Replacement",
		PartEndToEnd: "3. End to end", PartMissingImage: "5. Missing image", PartRollout: "6. Rolling update",
	} {
		r := goodResults()
		r.Config.Only = []string{part}
		rows := BuildRows(r)
		if len(rows) == 0 {
			t.Errorf("--only %s: no rows", part)
		}
		for _, row := range rows {
			if !strings.HasPrefix(row.Part, prefix) {
				t.Errorf("--only %s: row %q of part %q", part, row.Measure, row.Part)
			}
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

func TestReplacementRowsTellTheEnginesRemovalFromTheManagersPart(t *testing.T) {
	d := goodResults().Docker
	d.DockerStart = ms(300, 300, 300)
	d.Replacement = ms(500, 420, 460)
	d.ReplacementFreed = ms(150, 100, 130)
	rows := replacementRows(d)
	for measure, want := range map[string]string{
		"rm -f → old container destroyed": spread(ms(150, 100, 130)),
		"destroyed → replacement running": "30ms", // medians: 330 after the destroy, 300 a start
	} {
		var got []string
		for _, row := range rows {
			if strings.Contains(row.Measure, measure) {
				got = append(got, row.Result)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("rows %q: %q, want one of %q", measure, got, want)
		}
	}

	d.ReplacementFreed = nil // results of a run before the destroy was timed
	if n := len(replacementRows(d)); n != 3 {
		t.Errorf("without the destroy times: %d rows, want 3", n)
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
			wantVerdicts(t, rows, tt.p50, "of the p50s")
			wantVerdicts(t, rows, tt.p99, "of the p99s")
		})
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
		rows := failureRows(&DockerResults{Failure: &FailureResult{Replicas: 100, Window: tt.window, CreateErrors: tt.creates}})
		if got := verdictOf(t, rows, "create calls"); got != tt.want {
			t.Errorf("%d creates in %s: verdict %v, want %v", tt.creates, tt.window, got, tt.want)
		}
	}
}

func TestUnmeasuredPartsMissNothing(t *testing.T) {
	for _, r := range BuildRows(&Results{Docker: &DockerResults{Replicas: 30}}) {
		if r.Verdict == Missed {
			t.Errorf("%s: MISSED without a sample", r.Measure)
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

func TestRenderTextNamesEachPartOnce(t *testing.T) {
	out := RenderText([]Row{
		{Part: "A", Measure: "one", Result: "1"},
		{Part: "A", Measure: "two", Result: "2", Target: "≤ 3", Verdict: Met},
		{Part: "B", Measure: "three", Result: "3"},
	})
	want := `Part  Measure  Result  Target  Verdict
----  -------  ------  ------  -------
A     one      1
      two      2       ≤ 3     met
B     three    3
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
