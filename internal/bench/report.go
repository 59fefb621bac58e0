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
	// The control-plane targets hold at targetScaleAt controllers only.
	targetScaleAt              = 10000
	targetResync               = time.Second
	targetEventToCreateP99     = 10 * time.Millisecond
	targetEventToCreateBusyP99 = 50 * time.Millisecond
	targetRSS                  = 300 << 20
	targetConvergeStatuses     = 12 * time.Second
	// targetSteadyWrites and targetSteadyCPU bound one sync period of a
	// converged host that nothing changes.
	targetSteadyWrites = 10
	targetSteadyCPU    = 200 * time.Millisecond
	// targetFailureCreates bounds the creates of a missing image in its
	// first targetFailureWindow.
	targetFailureCreates = 10
	targetFailureWindow  = time.Minute
	// targetRolloutRatio bounds a rolling update by the manager over the
	// same update by Swarm, of the medians, for each strategy.
	targetRolloutRatio = 1.00
	// targetRolloutEventToCreateP99 bounds a new controller's event →
	// create while every controller of the control plane rolls out.
	targetRolloutEventToCreateP99 = 10 * time.Millisecond
	// The scheduler's targets over several nodes: the first assignment and
	// the reassignment of a dead node hold at targetNodesControllers ×
	// targetNodesReplicas over targetNodesCount nodes only (a node holds
	// 1,000 slots then); the steady state's at any size.
	targetNodesControllers     = 10000
	targetNodesReplicas        = 10
	targetNodesCount           = 100
	targetNodesFirstAssignment = 5 * time.Second
	targetNodesReassign        = time.Second
	targetNodesSteadyWrites    = 0
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
		if cfg.runs(PartReplacement) {
			rows = append(rows, replacementRows(d)...)
		}
		if cfg.runs(PartEndToEnd) {
			rows = append(rows, endToEndRows(d)...)
		}
	}
	rows = append(rows, scaleRows(r.Scale)...)
	if d := r.Docker; d != nil {
		if cfg.runs(PartMissingImage) {
			rows = append(rows, failureRows(d.Failure)...)
		}
		if cfg.runs(PartRollout) {
			rows = append(rows, rolloutRows(d)...)
		}
	}
	if r.Nodes != nil && cfg.runs(PartNodes) {
		rows = append(rows, nodesRows(r.Nodes)...)
	}
	for _, b := range r.GoBench {
		rows = append(rows, Row{
			Part:    "Go benchmarks (registry/...)",
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
		{Part: part, Measure: up + " manager, new controller each round (spec write → all running)", Result: spread(d.ManagerUp)},
		{Part: part, Measure: up + fmt.Sprintf(" raw Docker (%d parallel create+start)", d.Replicas), Result: spread(d.RawUp)},
	}
	if d.Swarm == "" {
		rows = append(rows, Row{Part: part, Measure: up + " Swarm (service create --replicas N)", Result: spread(d.SwarmUp)})
	}
	rows = append(rows, ratioRow(part, up+" ratio manager (new controller)/raw (of the medians)", d.ManagerUp, d.RawUp, targetConvergenceRatio),
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

// curveRows show when the k-th container ran, as the median over rounds,
// and the manager's proven-template scale, without a target: the same
// controller scaled 0→N again once the daemon has created its containers.
func curveRows(part, up string, d *DockerResults) []Row {
	rows := []Row{
		{Part: part, Measure: up + " manager, new controller: k-th container running by (median over rounds)", Result: fmtCurve(medianCurve(d.ManagerCurves))},
		{Part: part, Measure: up + " raw Docker: k-th container running by", Result: fmtCurve(medianCurve(d.RawCurves))},
	}
	if len(d.SwarmCurves) > 0 {
		rows = append(rows, Row{Part: part, Measure: up + " Swarm: k-th container running by", Result: fmtCurve(medianCurve(d.SwarmCurves))})
	}
	if len(d.ManagerProvenUp) > 0 {
		rows = append(rows,
			Row{Part: part, Measure: up + " manager, proven template (the round's controller scaled " + up + " again)", Result: spread(d.ManagerProvenUp)},
			Row{Part: part, Measure: up + " ratio manager (proven template)/raw", Result: fmtRatio(ratio(d.ManagerProvenUp.Median(), d.RawUp.Median()))},
			Row{Part: part, Measure: up + " manager, proven template: k-th container running by", Result: fmtCurve(medianCurve(d.ManagerProvenCurves))},
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

func scaleRows(results []ScaleResult) []Row {
	var rows []Row
	for _, s := range results {
		part := fmt.Sprintf("4. Control plane, %d controllers × %d (one host as it ships: leader and node manager in one process, fake Docker, real etcd, %d workers)", s.Controllers, s.Replicas, s.Workers)
		targeted := s.Controllers == targetScaleAt
		// target sets the target of r at targetScaleAt controllers only
		target := func(r Row, text string, have, ok bool) Row {
			if targeted {
				r.Target, r.Verdict = text, judge(have, ok)
			}
			return r
		}
		probe, busy := s.EventToCreate, s.EventToCreateBusy
		rows = append(rows,
			Row{Part: part, Measure: fmt.Sprintf("first convergence 0→%d replicas (the leader assigns every slot, the node creates them)", s.Controllers*s.Replicas), Result: fmtDuration(s.Converge)},
			target(Row{Part: part, Measure: "  every status says all replicas ready, from the first spec write (the node reports, the leader writes the statuses)", Result: fmtDuration(s.ConvergeStatuses)},
				"≤ "+fmtDuration(targetConvergeStatuses), s.ConvergeStatuses > 0, s.ConvergeStatuses <= targetConvergeStatuses),
			target(Row{Part: part, Measure: "the node's full resync (Synchronize → every controller synced)", Result: spread(s.Resync)},
				"≤ "+fmtDuration(targetResync), len(s.Resync) > 0, s.Resync.Median() <= targetResync),
			Row{Part: part, Measure: "  of which: the Synchronize call (list + queue)", Result: spread(s.ResyncCall)},
			Row{Part: part, Measure: "restart of leader and node with every status due (the node lists, syncs and reports every controller; the leader writes every status)", Result: fmt.Sprintf("%s (%d status writes)", fmtDuration(s.ColdResync), s.StatusWrites)},
			target(Row{Part: part, Measure: "spec write → the node's first create call (the leader's decision and assignment write, the node's claim in its report)",
				Result: fmt.Sprintf("p50 %s, p99 %s (n=%d, from the spec write)", fmtDuration(probe.Percentile(50)), fmtDuration(probe.Percentile(99)), len(probe))},
				"p99 ≤ "+fmtDuration(targetEventToCreateP99), len(probe) > 0, probe.Percentile(99) <= targetEventToCreateP99),
			Row{Part: part, Measure: "  same, from the write's acknowledgement",
				Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(s.CommitToCreate.Percentile(50)), fmtDuration(s.CommitToCreate.Percentile(99)))},
		)
		if a := s.EventToAssignment; len(a) > 0 {
			rows = append(rows, Row{Part: part, Measure: "  of which: spec write → the leader's assignment (seen by a watch in the host's process)",
				Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(a.Percentile(50)), fmtDuration(a.Percentile(99)))})
		}
		if st := s.EventToStatus; len(st) > 0 {
			rows = append(rows, Row{Part: part, Measure: "  same spec write → the leader's status in etcd with the replica ready (from the node's report)",
				Result: fmt.Sprintf("p50 %s, p99 %s (n=%d)", fmtDuration(st.Percentile(50)), fmtDuration(st.Percentile(99)), len(st))})
		}
		rows = append(rows,
			target(Row{Part: part, Measure: "  first create, while the node's full resyncs run back to back",
				Result: fmt.Sprintf("p50 %s, p99 %s, max %s (n=%d)", fmtDuration(busy.Percentile(50)), fmtDuration(busy.Percentile(99)), fmtDuration(busy.Max()), len(busy))},
				"p99 ≤ "+fmtDuration(targetEventToCreateBusyP99), len(busy) > 0, busy.Percentile(99) <= targetEventToCreateBusyP99),
		)
		if a := s.EventToAssignmentBusy; len(a) > 0 {
			rows = append(rows, Row{Part: part, Measure: "    of which: spec write → the leader's assignment",
				Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(a.Percentile(50)), fmtDuration(a.Percentile(99)))})
		}
		if st := s.Steady; st.Period > 0 {
			rows = append(rows, target(Row{Part: part, Measure: fmt.Sprintf("a steady period (%s, the default sync period: the node's resync and the leader's pass at its start, nothing changed): etcd writes; the process's CPU (host and fake)", fmtPeriod(st.Period)),
				Result: fmt.Sprintf("%d writes; %s CPU (%d syncs of the node)", st.Writes, fmtDuration(st.CPU), st.Syncs)},
				fmt.Sprintf("≤ %d writes, ≤ %s CPU", targetSteadyWrites, fmtDuration(targetSteadyCPU)), true, st.Writes <= targetSteadyWrites && st.CPU <= targetSteadyCPU))
		}
		if s.Rollout != nil {
			rows = append(rows, scaleRolloutRows(part, s)...)
		}
		if bm := s.BareMemory; bm != nil {
			rows = append(rows, target(Row{Part: part, Measure: "resident memory of the host's process (leader and node), on a bare task control", Result: fmtMemory(*bm)},
				"≤ "+fmtBytes(targetRSS), bm.RSS > 0, bm.RSS <= targetRSS))
		}
		rows = append(rows, Row{Part: part, Measure: "  same on the in-memory fake (it keeps a full copy of every container)", Result: fmtMemory(s.Memory)})
	}
	return rows
}

// scaleRolloutRows are the mass rollout's rows; its target holds at
// whatever count it was measured.
func scaleRolloutRows(part string, s ScaleResult) []Row {
	ro := s.Rollout
	probe := ro.EventToCreate
	enough := len(probe) >= minP99Samples
	target := "p99 ≤ " + fmtDuration(targetRolloutEventToCreateP99)
	if !enough {
		target += fmt.Sprintf(" (needs n ≥ %d)", minP99Samples)
	}
	return []Row{
		{Part: part, Measure: "  first create, while every controller rolls out (the rolling update below)",
			Result: fmt.Sprintf("p50 %s, p99 %s, max %s (n=%d)", fmtDuration(probe.Percentile(50)), fmtDuration(probe.Percentile(99)), fmtDuration(probe.Max()), len(probe)),
			Target: target, Verdict: judge(enough, probe.Percentile(99) <= targetRolloutEventToCreateP99)},
		{Part: part, Measure: "    of which: spec write → the leader's assignment",
			Result: fmt.Sprintf("p50 %s, p99 %s", fmtDuration(ro.EventToAssignment.Percentile(50)), fmtDuration(ro.EventToAssignment.Percentile(99)))},
		{Part: part, Measure: fmt.Sprintf("rolling update of every controller (a new image in all %d specs at once, default strategy: stop-first, one at a time) → every container of the new template", s.Controllers),
			Result: fmt.Sprintf("%s (the spec writes %s; a controller's status said RolloutComplete by %s, median)", fmtDuration(ro.Complete), fmtDuration(ro.WriteSpecs), fmtDuration(ro.Done.Median()))},
		{Part: part, Measure: "  the node meanwhile: rollout steps, syncs, most controllers in its queue, events dropped; task-control calls",
			Result: fmt.Sprintf("%.0f steps, %d syncs, queue depth up to %.0f, %.0f events dropped; %s", ro.Steps, ro.Syncs, ro.QueueDepthMax, ro.EventsDropped, fmtCalls(ro.Calls))},
	}
}

// fmtMemory prints a memory measurement.
func fmtMemory(m MemoryResult) string {
	return fmt.Sprintf("%s (peak %s); %s after a GC, %s of it left when the host stops",
		fmtBytes(m.RSS), fmtBytes(m.PeakRSS), fmtBytes(m.RSSAfterGC), fmtBytes(m.RSSWithoutManager))
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
		rows = append(rows, Row{Part: part, Measure: name + ": k-th new container running by, manager (median over rounds)", Result: fmtCurve(medianCurve(r.ManagerCurves))})
		if d.Swarm == "" {
			rows = append(rows, Row{Part: part, Measure: name + ": k-th new container running by, Swarm", Result: fmtCurve(medianCurve(r.SwarmCurves))})
		}
		if len(r.ManagerCalls) > 0 {
			rows = append(rows, Row{Part: part, Measure: name + ": task-control calls per rolling update, manager (its /metrics)", Result: fmtCalls(r.ManagerCalls)})
		}
	}
	return rows
}

// nodesPartPrefix begins the part name of the nodes rows.
const nodesPartPrefix = "7. Scheduler over nodes"

// nodesRows are the scheduler's rows over simulated nodes.
func nodesRows(n *NodesResult) []Row {
	reports := "their reports written"
	if !n.Reports {
		reports = "registrations only, no reports"
	}
	part := fmt.Sprintf("%s, %d controllers × %d over %d simulated nodes (%s; real etcd, NodeGrace %s)", nodesPartPrefix, n.Controllers, n.Replicas, n.Nodes, reports, fmtPeriod(n.NodeGrace))
	sized := n.Controllers == targetNodesControllers && n.Replicas == targetNodesReplicas && n.Nodes == targetNodesCount
	// target sets the target of r at the size only
	target := func(r Row, text string, have, ok bool) Row {
		if sized {
			r.Target, r.Verdict = text, judge(have, ok)
		}
		return r
	}
	first := "not measured"
	if n.FirstAssignment > 0 {
		first = fmt.Sprintf("%s (the first key after %s; %d keys, %s per node)", fmtDuration(n.FirstAssignment), fmtDuration(n.FirstKey),
			n.Assignments, fmtSlots(n.SlotsPerNodeMin, n.SlotsPerNodeMax))
	}
	rows := []Row{
		target(Row{Part: part, Measure: fmt.Sprintf("first assignment: Scheduler.Run (specs and nodes in etcd) → all %d assignment keys exist (a watch on the prefix)", n.Controllers*n.Replicas), Result: first},
			"≤ "+fmtDuration(targetNodesFirstAssignment), n.FirstAssignment > 0, n.FirstAssignment <= targetNodesFirstAssignment),
		{Part: part, Measure: "  then the rest of its first pass and the simulated nodes' reports (slots and a running container each): every status, history record and report written, then quiet",
			Result: fmtFirstPass(n)},
	}
	if n.Memory != nil {
		rows = append(rows, Row{Part: part, Measure: "resident memory of the scheduler's process after its first pass", Result: fmt.Sprintf("%s (peak %s); %s after a GC",
			fmtBytes(n.Memory.RSS), fmtBytes(n.Memory.PeakRSS), fmtBytes(n.Memory.RSSAfterGC))})
	}
	r := n.Reassign
	rows = append(rows, target(Row{Part: part,
		Measure: fmt.Sprintf("reassignment of a dead node: its lease revoked → each of its slots on another node, the grace included (SyncPeriod %s: no periodic pass meanwhile)", fmtPeriod(n.IdleSyncPeriod)),
		Result:  fmtReassignment(r)},
		"≤ "+fmtDuration(targetNodesReassign), r != nil && r.Took > 0, r != nil && r.Took <= targetNodesReassign))
	steady := "not measured"
	if n.SteadyWindow > 0 {
		steady = fmt.Sprintf("%d in %s (%d ticks of the sync period; %d status writes; the scheduler's CPU %s, %.2f cores on average)", n.SteadyWrites, fmtDuration(n.SteadyWindow), n.SteadyPasses,
			n.SteadyStatusWrites, fmtDuration(n.SteadyCPU), n.SteadyCPU.Seconds()/n.SteadyWindow.Seconds())
	}
	rows = append(rows,
		Row{Part: part, Measure: fmt.Sprintf("steady state: assignment writes over ≥ %d sync periods of %s after convergence (a second scheduler, started on the same etcd; from its mirrors listed, its first pass included)", n.SteadyPeriods, fmtPeriod(n.SyncPeriod)),
			Result: steady, Target: fmt.Sprintf("%d", targetNodesSteadyWrites), Verdict: judge(n.SteadyWindow > 0, n.SteadyWrites <= targetNodesSteadyWrites)},
		Row{Part: part, Measure: "  that second scheduler (a new leader): its mirrors listed (every slot and reported container counted) after",
			Result: fmtAfter(n.RestartListed, "after its start")},
		Row{Part: part, Measure: fmt.Sprintf("  reassignment of a dead node while its periodic passes run (SyncPeriod %s)", fmtPeriod(n.SyncPeriod)),
			Result: fmtReassignment(n.ReassignBusy)},
	)
	return rows
}

// fmtAfter prints d with what it is measured from, or that it was not
// measured.
func fmtAfter(d time.Duration, from string) string {
	if d <= 0 {
		return "not measured"
	}
	return fmtDuration(d) + " " + from
}

func fmtReassignment(r *NodeReassignment) string {
	if r == nil || r.Took <= 0 {
		return "not measured"
	}
	return fmt.Sprintf("%s (%s, %d slots; its key deleted after %s; %d assignment writes; then %s per live node)",
		fmtDuration(r.Took), r.Node, r.Slots, fmtDuration(r.NodeKeyGone), r.Writes, fmtSlots(r.AfterMin, r.AfterMax))
}

// fmtSlots prints the fewest and most slots of the nodes.
func fmtSlots(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d slots", lo)
	}
	return fmt.Sprintf("%d-%d slots", lo, hi)
}

// fmtPeriod prints a period without its zero minutes and seconds: 1h,
// 30s, 1m30s.
func fmtPeriod(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func fmtFirstPass(n *NodesResult) string {
	if n.FirstPass <= 0 {
		return "not measured"
	}
	return fmt.Sprintf("%s (%d report writes)", fmtAfter(n.FirstPass, "after the start"), n.ReportWrites)
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
