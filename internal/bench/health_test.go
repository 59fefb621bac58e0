package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestOnlyTheHealthPartsImageHasAHealthCheck(t *testing.T) {
	plain := buildImageArgs("img:1", "")
	if !slices.Contains(plain, "--no-healthcheck") || slices.Contains(plain, "--healthcheck") || plain[len(plain)-1] != "img:1" {
		t.Errorf("the image of the other parts: %q", plain)
	}
	checked := buildImageArgs("img:1-health", healthCheck)
	i := slices.Index(checked, "--healthcheck")
	if i < 0 || i+1 >= len(checked) || checked[i+1] != healthCheck || slices.Contains(checked, "--no-healthcheck") || checked[len(checked)-1] != "img:1-health" {
		t.Errorf("the health part's image: %q", checked)
	}
	for _, want := range []string{"--interval=1s", `CMD ["/task", "healthcheck"]`} {
		if !strings.Contains(healthCheck, want) {
			t.Errorf("HEALTHCHECK %s: want %s", healthCheck, want)
		}
	}
}

// goodHealth meets the health part's targets: ratios 1.05 and 1.05.
func goodHealth() *HealthConvergenceResult {
	return &HealthConvergenceResult{Replicas: 30, HealthCheck: healthCheck,
		ManagerVersusRaw: ManagerVersusRaw{ManagerUp: ms(1000, 1050, 1100), RawUp: ms(1000, 1000, 1000), ManagerDown: ms(500), RawDown: ms(500)},
		ManagerHealthy:   ms(2100), RawHealthy: ms(2000)}
}

const (
	healthRunning = "0→30 running: ratio manager (new controller)/raw"
	healthHealthy = "0→30 healthy: ratio manager (new controller)/raw"
)

func TestHealthConvergenceRowsJudgeBothRatios(t *testing.T) {
	rows := healthConvergenceRows(goodHealth())
	wantVerdicts(t, rows, Met, healthRunning, healthHealthy)
	targets := targeted(rows)
	if len(targets) != 2 {
		t.Errorf("%d rows with a target, want 2", len(targets))
	}
	for _, r := range targets {
		if r.Target != "≤ 1.05" {
			t.Errorf("%s: target %q, want ≤ 1.05", r.Measure, r.Target)
		}
	}
	if !hasMeasure(rows, "30 parallel docker run -d") || !hasMeasure(rows, "health_status: healthy") {
		t.Errorf("the rows do not say what was run: %+v", rows)
	}

	slow := goodHealth()
	slow.ManagerUp = ms(1051)
	rows = healthConvergenceRows(slow)
	wantVerdicts(t, rows, Missed, healthRunning)
	wantVerdicts(t, rows, Met, healthHealthy)
	unhealthy := goodHealth()
	unhealthy.ManagerHealthy = ms(2101)
	wantVerdicts(t, healthConvergenceRows(unhealthy), Missed, healthHealthy)

	none := goodHealth()
	none.ManagerUp, none.ManagerHealthy = nil, nil
	wantVerdicts(t, healthConvergenceRows(none), NotAvailable, healthRunning, healthHealthy)
	wantVerdicts(t, healthConvergenceRows(nil), NotAvailable, "health-checked image")
}

func TestHealthConvergenceRowsJudgeTheInspects(t *testing.T) {
	h := goodHealth()
	if hasMeasure(healthConvergenceRows(h), "inspects per") {
		t.Error("an inspects row without the daemon's calls")
	}
	for _, tt := range []struct {
		inspects float64
		want     Verdict
	}{{0, Met}, {30, Met}, {30.5, Missed}, {90, Missed}} {
		h.ManagerDockerCalls = map[string]float64{"create": 30, "inspect": tt.inspects}
		rows := healthConvergenceRows(h)
		if got := verdictOf(t, rows, "inspects per 0→30→0"); got != tt.want {
			t.Errorf("%.1f inspects per round of 30 replicas: verdict %v, want %v", tt.inspects, got, tt.want)
		}
		if !hasMeasure(rows, "task-control calls per 0→30→0") {
			t.Errorf("no row of the calls: %+v", rows)
		}
	}
}

func TestBuildRowsHasTheHealthRowsWhenThePartRuns(t *testing.T) {
	r := goodResults()
	if !hasMeasure(BuildRows(r), healthRunning) {
		t.Error("no health rows in a full run")
	}
	r.Config.Only = []string{PartHealth}
	for _, row := range BuildRows(r) {
		if !strings.HasPrefix(row.Part, healthPart) {
			t.Errorf("--only health: row %q of part %q", row.Measure, row.Part)
		}
	}
	r.Config.Only = []string{PartConvergence, PartTasks}
	if hasMeasure(BuildRows(r), healthRunning) {
		t.Error("health rows in a run without the part")
	}
}
