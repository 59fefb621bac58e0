package bench

// This file turns results into the table: one row per figure, with its
// target and whether it was met. Each target is judged on the statistic it
// names (p99), else on the median. Building rows and rendering them are
// pure; writing the files is in output.go.

import (
	"fmt"
	"math"
	"sort"
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
	targetConvergenceRatio = 1.10
	targetReplacementSlack = time.Second
	targetEndToEndP99      = 2 * time.Second
	targetResync           = time.Second
	targetResyncAt         = 10000
	targetEventToCreateP99 = 10 * time.Millisecond
	targetRSS              = 300 << 20
	targetFailureCreates   = 10
)

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
	if d := r.Docker; d != nil {
		rows = append(rows, convergenceRows(d)...)
		rows = append(rows, replacementRows(d)...)
		rows = append(rows, endToEndRows(d)...)
	}
	rows = append(rows, scaleRows(r.Scale)...)
	if d := r.Docker; d != nil {
		rows = append(rows, failureRows(d.Failure)...)
	}
	for _, b := range r.GoBench {
		rows = append(rows, Row{
			Part:    "Go benchmarks (registry)",
			Measure: b.Name,
			Result:  fmt.Sprintf("%s/op, %d B/op, %d allocs/op", fmtDuration(time.Duration(b.NsPerOp)), b.BytesPerOp, b.AllocsPerOp),
		})
	}
	return rows
}

// convergenceMissed reports whether the manager's 0→N missed its target.
func convergenceMissed(d *DockerResults) bool {
	return len(d.ManagerUp) > 0 && !(ratio(d.ManagerUp.Median(), d.RawUp.Median()) <= targetConvergenceRatio)
}

func convergenceRows(d *DockerResults) []Row {
	part := fmt.Sprintf("1. Convergence, N=%d, real Docker", d.Replicas)
	up := fmt.Sprintf("0→%d", d.Replicas)
	down := fmt.Sprintf("%d→0", d.Replicas)
	rows := []Row{
		{Part: part, Measure: up + " manager (spec write → all running)", Result: spread(d.ManagerUp)},
		{Part: part, Measure: up + fmt.Sprintf(" raw Docker (%d parallel create+start)", d.Replicas), Result: spread(d.RawUp)},
	}
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: up + " Swarm (service create --replicas N)", Result: spread(d.SwarmUp)})
	}
	rUp := ratio(d.ManagerUp.Median(), d.RawUp.Median())
	rows = append(rows, Row{Part: part, Measure: up + " ratio manager/raw (of the medians)", Result: fmtRatio(rUp),
		Target: fmt.Sprintf("≤ %.2f", targetConvergenceRatio), Verdict: judge(!math.IsNaN(rUp) && len(d.ManagerUp) > 0, rUp <= targetConvergenceRatio)},
		Row{Part: part, Measure: up + " ratio manager/raw, median of the rounds' ratios", Result: fmtRatio(medianRatio(d.ManagerUp, d.RawUp))})
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: up + " ratio manager/Swarm", Result: fmtRatio(ratio(d.ManagerUp.Median(), d.SwarmUp.Median()))})
	} else {
		rows = append(rows, Row{Part: part, Measure: "Swarm", Result: d.Swarm, Verdict: NotAvailable})
	}
	rows = append(rows, curveRows(part, up, d)...)
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
		rows = append(rows, Row{Part: part, Measure: fmt.Sprintf("task-control calls per 0→%d→0, manager (its /metrics; a create is create+start+inspect, a delete stop+remove)", d.Replicas), Result: fmtCalls(d.ManagerDockerCalls)},
			Row{Part: part, Measure: fmt.Sprintf("Docker API calls per 0→%d→0, raw Docker", d.Replicas), Result: fmt.Sprintf("create %d, start %d, remove %d", d.Replicas, d.Replicas, d.Replicas)})
	}
	return rows
}

// curveRows show when the k-th container ran, as the median over rounds,
// and the manager's first round apart: its template is new to the daemon,
// so it alone goes through slow start (1, 2, 4, ...).
func curveRows(part, up string, d *DockerResults) []Row {
	rows := []Row{
		{Part: part, Measure: up + " manager: k-th container running by (median over rounds)", Result: fmtCurve(medianCurve(d.ManagerCurves))},
		{Part: part, Measure: up + " raw Docker: k-th container running by", Result: fmtCurve(medianCurve(d.RawCurves))},
	}
	if len(d.SwarmCurves) > 0 {
		rows = append(rows, Row{Part: part, Measure: up + " Swarm: k-th container running by", Result: fmtCurve(medianCurve(d.SwarmCurves))})
	}
	if len(d.ManagerCurves) > 1 {
		rows = append(rows,
			Row{Part: part, Measure: up + " manager, round 1 (new template: slow start)", Result: fmtCurve(d.ManagerCurves[0])},
			Row{Part: part, Measure: up + fmt.Sprintf(" manager, rounds 2-%d (proven template)", len(d.ManagerCurves)), Result: spread(d.ManagerUp[1:])},
		)
	}
	return rows
}

// medianCurve is, for every k, the median over the curves of their k-th
// value; curves of different lengths are cut to the shortest.
func medianCurve(curves []Durations) Durations {
	if len(curves) == 0 {
		return nil
	}
	n := len(curves[0])
	for _, c := range curves {
		n = min(n, len(c))
	}
	out := make(Durations, n)
	for k := range n {
		col := make(Durations, len(curves))
		for i, c := range curves {
			col[i] = c[k]
		}
		out[k] = col.Median()
	}
	return out
}

// fmtCurve prints the 1st, quartile and last points of a curve.
func fmtCurve(c Durations) string {
	n := len(c)
	if n == 0 {
		return "no samples"
	}
	var parts []string
	last := 0
	for _, q := range []int{0, 1, 2, 3, 4} {
		k := max(1, (q*n+3)/4)
		if k == last {
			continue
		}
		last = k
		parts = append(parts, fmt.Sprintf("#%d %s", k, fmtDuration(c[k-1])))
	}
	return strings.Join(parts, ", ")
}

// medianRatio is the median over rounds of a[i]/b[i].
func medianRatio(a, b Durations) float64 {
	var rs []float64
	for i := range min(len(a), len(b)) {
		rs = append(rs, ratio(a[i], b[i]))
	}
	if len(rs) == 0 {
		return math.NaN()
	}
	sort.Float64s(rs)
	if len(rs)%2 == 1 {
		return rs[len(rs)/2]
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
}

// fmtCalls prints calls by operation, sorted by operation.
func fmtCalls(calls map[string]float64) string {
	ops := make([]string, 0, len(calls))
	for op := range calls {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s %.0f", op, calls[op])
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
	e := d.EndToEnd
	return []Row{
		{Part: part, Measure: "spec write → running and status readyReplicas 1",
			Result: fmt.Sprintf("p50 %s, p99 %s (n=%d)", fmtDuration(e.Percentile(50)), fmtDuration(e.Percentile(99)), len(e)),
			Target: "p99 ≤ " + fmtDuration(targetEndToEndP99), Verdict: judge(len(e) > 0, e.Percentile(99) <= targetEndToEndP99)},
		{Part: part, Measure: "  of which: spec write → container running",
			Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(d.EndToEndRunning.Percentile(50)), fmtDuration(d.EndToEndRunning.Percentile(99)))},
		{Part: part, Measure: "  of which: spec write → status in etcd",
			Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(d.EndToEndStatus.Percentile(50)), fmtDuration(d.EndToEndStatus.Percentile(99)))},
	}
}

func scaleRows(results []ScaleResult) []Row {
	var rows []Row
	for _, s := range results {
		part := fmt.Sprintf("4. Control plane, %d controllers × %d (fake Docker, real etcd, %d workers)", s.Controllers, s.Replicas, s.Workers)
		resync := Row{Part: part, Measure: "full resync (Synchronize → every controller synced)", Result: spread(s.Resync)}
		if s.Controllers == targetResyncAt {
			resync.Target = "≤ " + fmtDuration(targetResync)
			resync.Verdict = judge(len(s.Resync) > 0, s.Resync.Median() <= targetResync)
		}
		probe := s.EventToCreate
		event := Row{Part: part, Measure: "watch event → first create call",
			Result: fmt.Sprintf("p50 %s, p99 %s (n=%d, from the spec write)", fmtDuration(probe.Percentile(50)), fmtDuration(probe.Percentile(99)), len(probe)),
			Target: "p99 ≤ " + fmtDuration(targetEventToCreateP99), Verdict: judge(len(probe) > 0, probe.Percentile(99) <= targetEventToCreateP99)}
		var memRows []Row
		if bm := s.BareMemory; bm != nil {
			r := Row{Part: part, Measure: "resident memory of the manager's process, on a bare task control",
				Result: fmtMemory(*bm)}
			if s.Controllers == targetResyncAt {
				r.Target = "≤ " + fmtBytes(targetRSS)
				r.Verdict = judge(bm.RSS > 0, bm.RSS <= targetRSS)
			}
			memRows = append(memRows, r)
		}
		memRows = append(memRows, Row{Part: part, Measure: "  same on the in-memory fake (it keeps a full copy of every container)", Result: fmtMemory(s.Memory)})
		rows = append(rows,
			Row{Part: part, Measure: fmt.Sprintf("first convergence 0→%d replicas", s.Controllers*s.Replicas), Result: fmtDuration(s.Converge)},
			resync,
			Row{Part: part, Measure: "  of which: the Synchronize call (list + queue)", Result: spread(s.ResyncCall)},
			Row{Part: part, Measure: "restart with every status due (list, sync all, write all)", Result: fmt.Sprintf("%s (%d status writes)", fmtDuration(s.ColdResync), s.StatusWrites)},
			event,
			Row{Part: part, Measure: "  same, from the write's acknowledgement",
				Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(s.CommitToCreate.Percentile(50)), fmtDuration(s.CommitToCreate.Percentile(99)))},
			Row{Part: part, Measure: "  same, while full resyncs run back to back",
				Result: fmt.Sprintf("p50 %s, p99 %s, max %s (n=%d)", fmtDuration(s.EventToCreateBusy.Percentile(50)), fmtDuration(s.EventToCreateBusy.Percentile(99)), fmtDuration(s.EventToCreateBusy.Max()), len(s.EventToCreateBusy))},
		)
		rows = append(rows, memRows...)
	}
	return rows
}

// fmtMemory prints a memory measurement.
func fmtMemory(m MemoryResult) string {
	return fmt.Sprintf("%s (peak %s); %s after a GC, %s of it left when the manager stops",
		fmtBytes(m.RSS), fmtBytes(m.PeakRSS), fmtBytes(m.RSSAfterGC), fmtBytes(m.RSSWithoutManager))
}

func failureRows(f *FailureResult) []Row {
	if f == nil {
		return nil
	}
	part := fmt.Sprintf("5. Missing image, %d replicas", f.Replicas)
	window := f.Window.Round(time.Second).String()
	return []Row{
		{Part: part, Measure: "create calls in the first " + window, Result: fmt.Sprintf("%d failed, %d succeeded", f.CreateErrors, f.CreateSuccesses),
			Target: fmt.Sprintf("≤ %d in 1m0s", targetFailureCreates), Verdict: verdict(f.CreateErrors+f.CreateSuccesses <= targetFailureCreates)},
		{Part: part, Measure: "ReplicaFailure condition", Result: f.Condition},
	}
}

// missed returns the rows that missed their target.
func missed(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Verdict == Missed {
			out = append(out, r)
		}
	}
	return out
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

// RenderMarkdown renders rows as a Markdown table.
func RenderMarkdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| Part | Measure | Result | Target | Verdict |\n|---|---|---|---|---|\n")
	last := ""
	for _, r := range rows {
		part := r.Part
		if part == last {
			part = ""
		}
		last = r.Part
		v := r.Verdict.String()
		if r.Verdict == Missed || r.Verdict == Met {
			v = "**" + v + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(part), mdCell(strings.TrimSpace(r.Measure)), mdCell(r.Result), mdCell(r.Target), v)
	}
	return b.String()
}

// mdCell escapes what would break a table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
