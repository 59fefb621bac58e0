package bench

import (
	"strings"
	"testing"
)

// goodPull meets the pull part's target: a ratio of 1.05.
func goodPull() *PullConvergenceResult {
	return &PullConvergenceResult{Replicas: 30, Image: "127.0.0.1:40000/rm-bench-pull:run",
		ManagerVersusRaw: ManagerVersusRaw{ManagerUp: ms(2000, 2100, 2200), RawUp: ms(2000, 2000, 2000), ManagerDown: ms(500), RawDown: ms(500)}}
}

const pullRatio = "0→30 pulled: ratio manager (new controller)/raw"

func TestPullConvergenceRowsJudgeTheRatioAgainst1_05(t *testing.T) {
	rows := pullConvergenceRows(goodPull())
	wantVerdicts(t, rows, Met, pullRatio)
	targets := targeted(rows)
	if len(targets) != 1 || targets[0].Target != "≤ 1.05" {
		t.Errorf("rows with a target: %+v, want the ratio's only, ≤ 1.05", targets)
	}
	if !hasMeasure(rows, "30 parallel docker run -d") || !hasMeasure(rows, "pull") {
		t.Errorf("the rows do not say what was run: %+v", rows)
	}

	slow := goodPull()
	slow.ManagerUp = ms(2101)
	wantVerdicts(t, pullConvergenceRows(slow), Missed, pullRatio)
	none := goodPull()
	none.ManagerUp = nil
	wantVerdicts(t, pullConvergenceRows(none), NotAvailable, pullRatio)
	wantVerdicts(t, pullConvergenceRows(nil), NotAvailable, "pulled image")
}

func TestBuildRowsHasThePullRowsWhenThePartRuns(t *testing.T) {
	r := goodResults()
	r.Config.Only = []string{PartPull}
	rows := BuildRows(r)
	if !hasMeasure(rows, pullRatio) {
		t.Errorf("--only pull: no pull ratio in %+v", rows)
	}
	for _, row := range rows {
		if !strings.HasPrefix(row.Part, pullPart) {
			t.Errorf("--only pull: row %q of part %q", row.Measure, row.Part)
		}
	}
	r.Config.Only = []string{PartConvergence, PartHealth}
	if hasMeasure(BuildRows(r), "pulled") {
		t.Error("pull rows in a run without the part")
	}
}
