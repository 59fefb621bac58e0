package bench

// This file turns results into the table: one row per figure, with its
// target and whether it was met. Each target is judged on the statistic it
// names (p99), else on the median. Building rows and rendering them are
// pure; writing the files is in run.go and markdown.go.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Verdict says how a figure compares with its target.
type Verdict int

const (
	// Info is a figure without a target.
	Info Verdict = iota
	Met
	Missed
	// NotAvailable is a part that could not be measured here.
	NotAvailable
)

func (v Verdict) String() string {
	switch v {
	case Met:
		return "met"
	case Missed:
		return "MISSED"
	case NotAvailable:
		return "n/a"
	default:
		return ""
	}
}

// Row is one line of the table.
type Row struct {
	Part    string
	Measure string
	Result  string
	Target  string
	Verdict Verdict
}

// Targets of issue 5.
const (
	// targetConvergenceRatio bounds a new controller's 0→N (first apply)
	// over N parallel create+start, of the medians.
	targetConvergenceRatio = 1.10
	// targetInspectsPerReplica bounds the manager's inspects per 0→N→0
	// (issue 16), per replica.
	targetInspectsPerReplica = 1
	// targetReplacementSlack bounds a replacement beyond one plain
	// create+start, of the medians.
	targetReplacementSlack = 100 * time.Millisecond
	// targetEndToEndP50Ratio and targetEndToEndP99Ratio bound a new
	// controller of 1 replica over one plain create+start.
	targetEndToEndP50Ratio = 1.10
	targetEndToEndP99Ratio = 1.30
	// targetFailureCreates bounds the creates of a missing image in its
	// first targetFailureWindow.
	targetFailureCreates = 10
	targetFailureWindow  = time.Minute
	// targetRolloutRatio bounds a rolling update by the manager over the
	// same update by Swarm, of the medians, for each strategy.
	targetRolloutRatio = 1.00
)

// minP99Samples is the fewest samples a p99 is judged on: with 20 the
// nearest-rank p99 is the largest sample.
const minP99Samples = 20

// verdict is Met when ok, else Missed.
func verdict(ok bool) Verdict {
	if ok {
		return Met
	}
	return Missed
}

// judge is verdict for a figure that was measured (have), else n/a: a part
// that failed or was interrupted has not missed anything.
func judge(have, ok bool) Verdict {
	if !have {
		return NotAvailable
	}
	return verdict(ok)
}

// spread prints the median of samples with their range.
func spread(d Durations) string {
	if len(d) == 0 {
		return "no samples"
	}
	if len(d) == 1 {
		return fmtDuration(d[0])
	}
	return fmt.Sprintf("median %s (min %s, max %s, n=%d)", fmtDuration(d.Median()), fmtDuration(d.Min()), fmtDuration(d.Max()), len(d))
}

func fmtRatio(r float64) string {
	if math.IsNaN(r) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", r)
}

// BuildRows makes the table of a run.
func BuildRows(r *Results) []Row {
	var rows []Row
	cfg := &r.Config
	if d := r.Docker; d != nil {
		if cfg.runs(PartConvergence) {
			rows = append(rows, convergenceRows(d)...)
		}
		if cfg.runs(PartTasks) {
			rows = append(rows, taskConvergenceRows(d.Tasks)...)
		}
		if cfg.runs(PartHealth) {
			rows = append(rows, healthConvergenceRows(d.Health)...)
		}
		if cfg.runs(PartPull) {
			rows = append(rows, pullConvergenceRows(d.Pull)...)
		}
		if cfg.runs(PartReplacement) {
			rows = append(rows, replacementRows(d)...)
		}
		if cfg.runs(PartEndToEnd) {
			rows = append(rows, endToEndRows(d)...)
		}
	}
	if d := r.Docker; d != nil {
		if cfg.runs(PartMissingImage) {
			rows = append(rows, failureRows(d.Failure)...)
		}
		if cfg.runs(PartRollout) {
			rows = append(rows, rolloutRows(d)...)
		}
	}
	return rows
}

func convergenceRows(d *DockerResults) []Row {
	part := fmt.Sprintf("1. Convergence, N=%d, real Docker", d.Replicas)
	up := fmt.Sprintf("0→%d", d.Replicas)
	down := fmt.Sprintf("%d→0", d.Replicas)
	rows := []Row{
		{Part: part, Measure: up + " manager, new controller each round (spec write → all running)", Result: spread(d.ManagerUp)},
		{Part: part, Measure: up + fmt.Sprintf(" raw Docker (%d parallel create+start)", d.Replicas), Result: spread(d.RawUp)},
	}
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: up + " Swarm (service create --replicas N)", Result: spread(d.SwarmUp)})
	}
	rows = append(rows, ratioRow(part, up+" ratio manager (new controller)/raw (of the medians)", d.ManagerUp, d.RawUp, targetConvergenceRatio))
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: up + " ratio manager/Swarm", Result: fmtRatio(ratio(d.ManagerUp.Median(), d.SwarmUp.Median()))})
	} else {
		rows = append(rows, Row{Part: part, Measure: "Swarm", Result: d.Swarm, Verdict: NotAvailable})
	}
	rows = append(rows,
		Row{Part: part, Measure: down + " manager (scale to 0 → all removed)", Result: spread(d.ManagerDown)},
		Row{Part: part, Measure: down + fmt.Sprintf(" raw Docker (%d parallel rm -f)", d.Replicas), Result: spread(d.RawDown)},
	)
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: down + " Swarm (service rm)", Result: spread(d.SwarmDown)})
	}
	rows = append(rows, Row{Part: part, Measure: down + " ratio manager/raw", Result: fmtRatio(ratio(d.ManagerDown.Median(), d.RawDown.Median()))})
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: down + " ratio manager/Swarm", Result: fmtRatio(ratio(d.ManagerDown.Median(), d.SwarmDown.Median()))})
	}
	if len(d.ManagerDockerCalls) > 0 {
		rows = append(rows, Row{Part: part, Measure: fmt.Sprintf("task-control calls per 0→%d→0 of a new controller, manager (its /metrics; a create is create+start+inspect, a delete stop+remove, image an image check)", d.Replicas), Result: fmtCalls(d.ManagerDockerCalls)},
			Row{Part: part, Measure: fmt.Sprintf("Docker API calls per 0→%d→0, raw Docker", d.Replicas), Result: fmt.Sprintf("create %d, start %d, remove %d", d.Replicas, d.Replicas, d.Replicas)})
		rows = append(rows, inspectsRow(part, d.Replicas, d.ManagerDockerCalls))
	}
	return rows
}

// ratioRow is the row of the ratio of the medians of manager over other,
// judged against ≤ target once manager has samples.
func ratioRow(part, measure string, manager, other Durations, target float64) Row {
	r := ratio(manager.Median(), other.Median())
	return Row{Part: part, Measure: measure, Result: fmtRatio(r),
		Target: fmt.Sprintf("≤ %.2f", target), Verdict: judge(!math.IsNaN(r) && len(manager) > 0, r <= target)}
}

// inspectsRow is the row of the manager's inspects per 0→replicas→0 of a
// new controller, from its task-control calls per round, judged against
// targetInspectsPerReplica per replica. Issue 16: events update the
// cache; an inspect per event (create, start, die) made it 3 per
// container.
func inspectsRow(part string, replicas int, calls map[string]float64) Row {
	inspects := calls["inspect"]
	most := replicas * targetInspectsPerReplica
	return Row{Part: part, Measure: fmt.Sprintf("inspects per 0→%d→0 of a new controller, manager (InspectTask; besides the one in each create)", replicas),
		Result: fmt.Sprintf("%.1f", inspects), Target: fmt.Sprintf("≤ %d", most), Verdict: verdict(inspects <= float64(most))}
}

// fmtCalls prints calls by operation, sorted by operation; an average per
// round may be a fraction.
func fmtCalls(calls map[string]float64) string {
	if len(calls) == 0 {
		return "none"
	}
	ops := make([]string, 0, len(calls))
	for op := range calls {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = op + " " + strconv.FormatFloat(math.Round(calls[op]*10)/10, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

func replacementRows(d *DockerResults) []Row {
	part := "2. Replacement after docker rm -f"
	start := d.DockerStart.Median()
	rep := d.Replacement.Median()
	return []Row{
		{Part: part, Measure: "one plain Docker create+start, until running", Result: spread(d.DockerStart)},
		{Part: part, Measure: "rm -f of a replica → replacement running", Result: fmt.Sprintf("%s; p90 %s", spread(d.Replacement), fmtDuration(d.Replacement.Percentile(90)))},
		{Part: part, Measure: "replacement beyond one Docker start (medians)", Result: fmtDuration(rep - start),
			Target: "≤ " + fmtDuration(targetReplacementSlack), Verdict: judge(len(d.Replacement) > 0 && len(d.DockerStart) > 0, rep-start <= targetReplacementSlack)},
	}
}

func endToEndRows(d *DockerResults) []Row {
	part := "3. End to end, new controller of 1 replica"
	e, p := d.EndToEnd, d.EndToEndPlain
	r50 := ratio(e.Percentile(50), p.Percentile(50))
	r99 := ratio(e.Percentile(99), p.Percentile(99))
	p99Target := fmt.Sprintf("≤ %.2f", targetEndToEndP99Ratio)
	enough := len(e) >= minP99Samples && len(p) >= minP99Samples
	if !enough {
		p99Target += fmt.Sprintf(" (needs n ≥ %d)", minP99Samples)
	}
	return []Row{
		{Part: part, Measure: "spec write → running and status readyReplicas 1",
			Result: fmt.Sprintf("p50 %s, p99 %s (n=%d)", fmtDuration(e.Percentile(50)), fmtDuration(e.Percentile(99)), len(e))},
		{Part: part, Measure: "  of which: spec write → container running",
			Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(d.EndToEndRunning.Percentile(50)), fmtDuration(d.EndToEndRunning.Percentile(99)))},
		{Part: part, Measure: "  of which: spec write → status in etcd",
			Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(d.EndToEndStatus.Percentile(50)), fmtDuration(d.EndToEndStatus.Percentile(99)))},
		{Part: part, Measure: "one plain Docker create+start, until running (alternating with the above)",
			Result: fmt.Sprintf("p50 %s, p99 %s (n=%d)", fmtDuration(p.Percentile(50)), fmtDuration(p.Percentile(99)), len(p))},
		{Part: part, Measure: "ratio manager/plain of the p50s", Result: fmtRatio(r50),
			Target: fmt.Sprintf("≤ %.2f", targetEndToEndP50Ratio), Verdict: judge(len(e) > 0 && len(p) > 0, r50 <= targetEndToEndP50Ratio)},
		{Part: part, Measure: "ratio manager/plain of the p99s", Result: fmtRatio(r99),
			Target: p99Target, Verdict: judge(enough, r99 <= targetEndToEndP99Ratio)},
	}
}

func failureRows(f *FailureResult) []Row {
	if f == nil {
		return nil
	}
	part := fmt.Sprintf("5. Missing image, %d replicas", f.Replicas)
	window := f.Window.Round(time.Second).String()
	creates := f.CreateErrors + f.CreateSuccesses
	target := fmt.Sprintf("≤ %d in %s", targetFailureCreates, targetFailureWindow)
	// a window shorter than the target's can miss it, not meet it
	v := judge(f.Window >= targetFailureWindow || creates > targetFailureCreates, creates <= targetFailureCreates)
	if v == NotAvailable {
		target += " (window too short)"
	}
	return []Row{
		{Part: part, Measure: "create calls in the first " + window, Result: fmt.Sprintf("%d failed, %d succeeded", f.CreateErrors, f.CreateSuccesses),
			Target: target, Verdict: v},
		{Part: part, Measure: "ReplicaFailure condition", Result: f.Condition},
		{Part: part, Measure: "the daemon's task-control calls in the window (all of them)", Result: fmtCalls(f.DockerCalls)},
	}
}

// rolloutStrategyNames describe the strategies of the rolling updates,
// by the names RolloutResult.Strategy carries.
var rolloutStrategyNames = map[string]string{
	"start-first": "start-first (manager maxSurge 1, maxUnavailable 0, monitorSeconds 0; Swarm --update-order start-first)",
	"stop-first":  "stop-first (manager maxUnavailable 1, maxSurge 0, monitorSeconds 0; Swarm --update-order stop-first)",
}

func rolloutRows(d *DockerResults) []Row {
	part := fmt.Sprintf("6. Rolling update, %d replicas, real Docker", d.RolloutReplicas)
	results := d.Rollouts
	if len(results) == 0 {
		// the part failed before its first sample: say so per strategy
		for _, s := range rolloutStrategies() {
			results = append(results, RolloutResult{Strategy: s.name})
		}
	}
	n := d.RolloutReplicas
	var rows []Row
	if d.Swarm != "" {
		rows = append(rows, Row{Part: part, Measure: "Swarm", Result: d.Swarm, Verdict: NotAvailable})
	}
	for _, r := range results {
		name := r.Strategy
		desc := rolloutStrategyNames[name]
		if desc == "" {
			desc = name
		}
		rows = append(rows,
			Row{Part: part, Measure: fmt.Sprintf("%s: manager, spec write → every replica on the new image and status Progressing/RolloutComplete, updatedReplicas %d", desc, n), Result: spread(r.Manager)},
			Row{Part: part, Measure: fmt.Sprintf("  of which: → the %d-th new container running", n), Result: spread(r.ManagerRunning)},
			Row{Part: part, Measure: "  of which: → that status in etcd", Result: spread(r.ManagerStatus)},
		)
		if d.Swarm == "" {
			rows = append(rows,
				Row{Part: part, Measure: fmt.Sprintf("%s: Swarm, service update --image (parallelism 1, delay 0s, monitor 0s) → every task on the new image, the old ones stopped", name), Result: spread(r.Swarm)},
				Row{Part: part, Measure: fmt.Sprintf("  of which: → the %d-th new container running", n), Result: spread(r.SwarmRunning)},
				Row{Part: part, Measure: "  Swarm: → update state completed", Result: spread(r.SwarmCompleted)},
			)
		}
		rr := ratio(r.Manager.Median(), r.Swarm.Median())
		rows = append(rows, Row{Part: part, Measure: name + ": ratio manager/Swarm (of the medians)", Result: fmtRatio(rr),
			Target: fmt.Sprintf("≤ %.2f", targetRolloutRatio), Verdict: judge(len(r.Manager) > 0 && len(r.Swarm) > 0, rr <= targetRolloutRatio)})
		if len(r.ManagerCalls) > 0 {
			rows = append(rows, Row{Part: part, Measure: name + ": task-control calls per rolling update, manager (its /metrics)", Result: fmtCalls(r.ManagerCalls)})
		}
	}
	return rows
}

// RenderText renders rows as an aligned plain-text table, with a part's
// name on its first row only.
func RenderText(rows []Row) string {
	header := []string{"Part", "Measure", "Result", "Target", "Verdict"}
	cells := [][]string{header}
	last := ""
	for _, r := range rows {
		part := r.Part
		if part == last {
			part = ""
		}
		last = r.Part
		cells = append(cells, []string{part, r.Measure, r.Result, r.Target, r.Verdict.String()})
	}
	widths := make([]int, len(header))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for n, row := range cells {
		var line strings.Builder
		for i, c := range row {
			line.WriteString(c)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		if n == 0 {
			for i, w := range widths {
				b.WriteString(strings.Repeat("-", w))
				if i < len(widths)-1 {
					b.WriteString("  ")
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
