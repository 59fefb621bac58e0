package bench

// This file turns results into the table: one row per figure, with its
// target and whether it was met. Each target is judged on the statistic it
// names (p99), else on the median. Building rows and rendering them are
// pure; writing the files is in run.go.

import (
	"fmt"
	"math"
	"slices"
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
	return [...]string{"", "met", "MISSED", "n/a"}[v]
}

// Row is one line of the table.
type Row struct {
	Part    string
	Measure string
	Result  string
	Target  string
	Verdict Verdict
}

// The targets of the issues (5, 16, 17, 27): the manager's 0→N (a new
// controller's first apply) over raw Docker's, of the medians, for the
// convergence and the tasks of several containers, and for a
// health-checked image (until the N-th has started and until the N-th is
// healthy) and an image the engine lacks; its inspects per 0→N→0, per
// replica; a replacement beyond one plain create+start, of the medians; a
// new controller of 1 replica over one plain create+start, of the p50s and
// of the p99s (on at least minP99Samples: with 20, the nearest-rank p99 is
// the largest sample); the creates of a missing image in its first
// minute; a rolling update over Swarm's, of the medians, per strategy.
const (
	targetConvergenceRatio   = 1.10
	targetHealthRatio        = 1.05
	targetPullRatio          = 1.05
	targetInspectsPerReplica = 1
	targetReplacementSlack   = 100 * time.Millisecond
	targetEndToEndP50Ratio   = 1.10
	targetEndToEndP99Ratio   = 1.30
	minP99Samples            = 20
	targetFailureCreates     = 10
	targetFailureWindow      = time.Minute
	targetRolloutRatio       = 1.00
)

// judge is Met or Missed by ok for a figure that was measured (have), else
// n/a: a part that failed or was interrupted has not missed anything.
func judge(have, ok bool) Verdict {
	switch {
	case !have:
		return NotAvailable
	case ok:
		return Met
	default:
		return Missed
	}
}

// BuildRows makes the table of a run: the rows of each part it measured,
// in the table's order.
func BuildRows(r *Results) []Row {
	d := r.Docker
	if d == nil {
		return nil
	}
	var rows []Row
	for _, p := range []struct {
		name string
		rows func(*DockerResults) []Row
	}{
		{PartConvergence, convergenceRows}, {PartTasks, taskRows}, {PartHealth, healthRows}, {PartPull, pullRows},
		{PartReplacement, replacementRows}, {PartEndToEnd, endToEndRows}, {PartMissingImage, failureRows}, {PartRollout, rolloutRows},
	} {
		if r.Config.runs(p.name) {
			rows = append(rows, p.rows(d)...)
		}
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

// downRows are the N→0 rows of manager against raw: what each did and
// took, and the ratio of the medians, without a target.
func downRows(part, down, manager, raw string, r ManagerVersusRaw) []Row {
	return []Row{
		{Part: part, Measure: down + " manager " + manager, Result: spread(r.ManagerDown)},
		{Part: part, Measure: down + " raw Docker " + raw, Result: spread(r.RawDown)},
		{Part: part, Measure: down + " ratio manager/raw", Result: fmtRatio(ratio(r.ManagerDown.Median(), r.RawDown.Median()))},
	}
}

// callRows are the manager's task-control calls per round (measure), what
// raw Docker calls in a round, and, when inspects, the manager's inspects
// per 0→replicas→0 judged against targetInspectsPerReplica per replica
// (issue 16: events update the cache; an inspect per event made it 3 per
// container).
func callRows(part, measure, raw string, replicas int, calls map[string]float64, inspects bool) []Row {
	rows := []Row{
		{Part: part, Measure: measure, Result: fmtCalls(calls)},
		{Part: part, Measure: fmt.Sprintf("Docker API calls per 0→%d→0, raw Docker", replicas), Result: raw},
	}
	if inspects {
		n, most := calls["inspect"], replicas*targetInspectsPerReplica
		rows = append(rows, Row{Part: part, Measure: fmt.Sprintf("inspects per 0→%d→0 of a new controller, manager (InspectTask; besides the one in each create)", replicas),
			Result: fmt.Sprintf("%.1f", n), Target: fmt.Sprintf("≤ %d", most), Verdict: judge(true, n <= float64(most))})
	}
	return rows
}

// newControllerCalls is the measure of the manager's calls per round of the
// parts after the convergence.
func newControllerCalls(n int) string {
	return fmt.Sprintf("task-control calls per 0→%d→0 of a new controller and its deletion, manager (its /metrics)", n)
}

func convergenceRows(d *DockerResults) []Row {
	n := d.Replicas
	part := fmt.Sprintf("1. Convergence, N=%d, real Docker", n)
	up, down := fmt.Sprintf("0→%d", n), fmt.Sprintf("%d→0", n)
	swarm := d.Swarm == ""
	rows := []Row{
		{Part: part, Measure: up + " manager, new controller each round (spec write → all running)", Result: spread(d.ManagerUp)},
		{Part: part, Measure: up + fmt.Sprintf(" raw Docker (%d parallel create+start)", n), Result: spread(d.RawUp)},
	}
	if swarm {
		rows = append(rows, Row{Part: part, Measure: up + " Swarm (service create --replicas N)", Result: spread(d.SwarmUp)})
	}
	rows = append(rows, ratioRow(part, up+" ratio manager (new controller)/raw (of the medians)", d.ManagerUp, d.RawUp, targetConvergenceRatio))
	if swarm {
		rows = append(rows, Row{Part: part, Measure: up + " ratio manager/Swarm", Result: fmtRatio(ratio(d.ManagerUp.Median(), d.SwarmUp.Median()))})
	} else {
		rows = append(rows, Row{Part: part, Measure: "Swarm", Result: d.Swarm, Verdict: NotAvailable})
	}
	rows = append(rows, downRows(part, down, "(scale to 0 → all removed)", fmt.Sprintf("(%d parallel rm -f)", n), d.ManagerVersusRaw)...)
	if swarm {
		rows = slices.Insert(rows, len(rows)-1, Row{Part: part, Measure: down + " Swarm (service rm)", Result: spread(d.SwarmDown)})
		rows = append(rows, Row{Part: part, Measure: down + " ratio manager/Swarm", Result: fmtRatio(ratio(d.ManagerDown.Median(), d.SwarmDown.Median()))})
	}
	if len(d.ManagerDockerCalls) > 0 {
		rows = append(rows, callRows(part, fmt.Sprintf("task-control calls per 0→%d→0 of a new controller, manager (its /metrics; a create is create+start+inspect, a delete stop+remove, image an image check)", n),
			fmt.Sprintf("create %d, start %d, remove %d", n, n, n), n, d.ManagerDockerCalls, true)...)
	}
	return rows
}

// taskShape describes the tasks of the tasks part.
const taskShape = "the demo task + a prober sidecar in its network (container:<first>), both mounting an emptyDir (demospec.SidecarController); the prober's health check left out, as the image's is"

func taskRows(d *DockerResults) []Row {
	t := d.Tasks
	if t == nil {
		return []Row{{Part: "1b. Convergence of tasks of several containers, real Docker", Measure: "tasks", Result: "not measured", Verdict: NotAvailable}}
	}
	n, all, volumes := t.Replicas, t.Replicas*t.Containers, t.Replicas*t.Volumes
	part := fmt.Sprintf("1b. Convergence of tasks of %d containers, N=%d tasks (%d containers), real Docker", t.Containers, n, all)
	up := fmt.Sprintf("0→%d tasks", n)
	health := "without the prober's health check"
	if t.HealthCheck {
		health = "with the prober's health check"
	}
	rows := []Row{
		{Part: part, Measure: "task: " + t.Shape, Result: health},
		{Part: part, Measure: fmt.Sprintf("%s manager, new controller each round (spec write → all %d containers running)", up, all), Result: spread(t.ManagerUp)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d at once, each: volume create, docker run -d of the first, docker run -d --network container:<first> of the other; %d docker run -d in all)", up, n, all), Result: spread(t.RawUp)},
		ratioRow(part, up+" ratio manager (new controller)/raw (of the medians)", t.ManagerUp, t.RawUp, targetConvergenceRatio),
	}
	rows = append(rows, downRows(part, fmt.Sprintf("%d→0 tasks", n), "(scale to 0 → all containers removed)", fmt.Sprintf("(%d at once, each: rm -f of its containers, then volume rm)", n), t.ManagerVersusRaw)...)
	return append(rows, callRows(part, newControllerCalls(n),
		fmt.Sprintf("volume create %d, create %d, start %d, remove %d, volume remove %d", volumes, all, all, all, volumes), n, t.ManagerDockerCalls, false)...)
}

// healthPart names the health part's rows.
const healthPart = "1c. Convergence of a health-checked image"

func healthRows(d *DockerResults) []Row {
	h := d.Health
	if h == nil {
		return []Row{{Part: healthPart + ", real Docker", Measure: "health-checked image", Result: "not measured", Verdict: NotAvailable}}
	}
	n := h.Replicas
	part := fmt.Sprintf("%s, N=%d, real Docker", healthPart, n)
	up := fmt.Sprintf("0→%d", n)
	rows := []Row{
		{Part: part, Measure: "image: the demo task with", Result: "HEALTHCHECK " + h.HealthCheck},
		{Part: part, Measure: fmt.Sprintf("%s running: manager, new controller each round (spec write → the %d-th start event)", up, n), Result: spread(h.ManagerUp)},
		{Part: part, Measure: fmt.Sprintf("%s running: raw Docker (%d parallel docker run -d, from the first create)", up, n), Result: spread(h.RawUp)},
		ratioRow(part, up+" running: ratio manager (new controller)/raw (of the medians)", h.ManagerUp, h.RawUp, targetHealthRatio),
		{Part: part, Measure: fmt.Sprintf("%s healthy: manager (same start → the %d-th health_status: healthy event)", up, n), Result: spread(h.ManagerHealthy)},
		{Part: part, Measure: up + " healthy: raw Docker", Result: spread(h.RawHealthy)},
		ratioRow(part, up+" healthy: ratio manager (new controller)/raw (of the medians)", h.ManagerHealthy, h.RawHealthy, targetHealthRatio),
	}
	rows = append(rows, downRows(part, fmt.Sprintf("%d→0", n), "(scale to 0 → all removed), once all are healthy", fmt.Sprintf("(%d parallel rm -f)", n), h.ManagerVersusRaw)...)
	if len(h.ManagerDockerCalls) > 0 {
		rows = append(rows, callRows(part, newControllerCalls(n), fmt.Sprintf("create %d, start %d, remove %d", n, n, n), n, h.ManagerDockerCalls, true)...)
	}
	return rows
}

// pullPart names the pull part's rows.
const pullPart = "1d. Convergence of an image pulled from a registry"

func pullRows(d *DockerResults) []Row {
	p := d.Pull
	if p == nil {
		return []Row{{Part: pullPart + ", real Docker", Measure: "pulled image", Result: "not measured", Verdict: NotAvailable}}
	}
	n := p.Replicas
	part := fmt.Sprintf("%s, N=%d, real Docker", pullPart, n)
	up := fmt.Sprintf("0→%d", n)
	rows := []Row{
		{Part: part, Measure: "image, removed from the engine before each 0→N (none of its layers left)", Result: p.Image},
		{Part: part, Measure: fmt.Sprintf("%s manager, new controller each round (spec write → the %d-th start event; one pull, then the creates)", up, n), Result: spread(p.ManagerUp)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d parallel docker run -d: create, on no such image pull and create again, start; from the first create)", up, n), Result: spread(p.RawUp)},
		ratioRow(part, up+" pulled: ratio manager (new controller)/raw (of the medians)", p.ManagerUp, p.RawUp, targetPullRatio),
	}
	rows = append(rows, downRows(part, fmt.Sprintf("%d→0", n), "(scale to 0 → all removed)", fmt.Sprintf("(%d parallel rm -f)", n), p.ManagerVersusRaw)...)
	if len(p.ManagerDockerCalls) > 0 {
		rows = append(rows, callRows(part, newControllerCalls(n), "per container: create, a pull and a second create if the image was missing, start, remove", n, p.ManagerDockerCalls, false)...)
	}
	return rows
}

func replacementRows(d *DockerResults) []Row {
	part := "2. Replacement after docker rm -f"
	start, rep := d.DockerStart.Median(), d.Replacement.Median()
	rows := []Row{
		{Part: part, Measure: "one plain Docker create+start, until running", Result: spread(d.DockerStart)},
		{Part: part, Measure: "rm -f of a replica → replacement running", Result: fmt.Sprintf("%s; p90 %s", spread(d.Replacement), fmtDuration(d.Replacement.Percentile(90)))},
		{Part: part, Measure: "replacement beyond one Docker start (medians)", Result: fmtDuration(rep - start),
			Target: "≤ " + fmtDuration(targetReplacementSlack), Verdict: judge(len(d.Replacement) > 0 && len(d.DockerStart) > 0, rep-start <= targetReplacementSlack)},
	}
	if len(d.ReplacementFreed) == len(d.Replacement) && len(d.Replacement) > 0 {
		after := make(Durations, len(d.Replacement))
		for i := range after {
			after[i] = d.Replacement[i] - d.ReplacementFreed[i]
		}
		rows = append(rows,
			Row{Part: part, Measure: "  of which: rm -f → old container destroyed (the engine's)", Result: spread(d.ReplacementFreed)},
			Row{Part: part, Measure: "  of which: destroyed → replacement running, beyond one start", Result: fmtDuration(after.Median() - start)})
	}
	return rows
}

func endToEndRows(d *DockerResults) []Row {
	part := "3. End to end, new controller of 1 replica"
	e, p := d.EndToEnd, d.EndToEndPlain
	p50p99 := func(d Durations) string {
		return fmt.Sprintf("p50 %s, p99 %s", fmtDuration(d.Percentile(50)), fmtDuration(d.Percentile(99)))
	}
	r50, r99 := ratio(e.Percentile(50), p.Percentile(50)), ratio(e.Percentile(99), p.Percentile(99))
	p99Target := fmt.Sprintf("≤ %.2f", targetEndToEndP99Ratio)
	enough := len(e) >= minP99Samples && len(p) >= minP99Samples
	if !enough {
		p99Target += fmt.Sprintf(" (needs n ≥ %d)", minP99Samples)
	}
	return []Row{
		{Part: part, Measure: "spec write → running and status readyReplicas 1", Result: fmt.Sprintf("%s (n=%d)", p50p99(e), len(e))},
		{Part: part, Measure: "  of which: spec write → container running", Result: p50p99(d.EndToEndRunning)},
		{Part: part, Measure: "  of which: spec write → status in etcd", Result: p50p99(d.EndToEndStatus)},
		{Part: part, Measure: "one plain Docker create+start, until running (alternating with the above)", Result: fmt.Sprintf("%s (n=%d)", p50p99(p), len(p))},
		{Part: part, Measure: "ratio manager/plain of the p50s", Result: fmtRatio(r50),
			Target: fmt.Sprintf("≤ %.2f", targetEndToEndP50Ratio), Verdict: judge(len(e) > 0 && len(p) > 0, r50 <= targetEndToEndP50Ratio)},
		{Part: part, Measure: "ratio manager/plain of the p99s", Result: fmtRatio(r99), Target: p99Target, Verdict: judge(enough, r99 <= targetEndToEndP99Ratio)},
	}
}

func failureRows(d *DockerResults) []Row {
	f := d.Failure
	if f == nil {
		return nil
	}
	part := fmt.Sprintf("5. Missing image, %d replicas", f.Replicas)
	creates := f.CreateErrors + f.CreateSuccesses
	target := fmt.Sprintf("≤ %d in %s", targetFailureCreates, targetFailureWindow)
	// a window shorter than the target's can miss it, not meet it
	v := judge(f.Window >= targetFailureWindow || creates > targetFailureCreates, creates <= targetFailureCreates)
	if v == NotAvailable {
		target += " (window too short)"
	}
	return []Row{
		{Part: part, Measure: "create calls in the first " + f.Window.Round(time.Second).String(), Result: fmt.Sprintf("%d failed, %d succeeded", f.CreateErrors, f.CreateSuccesses),
			Target: target, Verdict: v},
		{Part: part, Measure: "ReplicaFailure condition", Result: f.Condition},
		{Part: part, Measure: "the daemon's task-control calls in the window (all of them)", Result: fmtCalls(f.DockerCalls)},
	}
}

func rolloutRows(d *DockerResults) []Row {
	part := fmt.Sprintf("6. Rolling update, %d replicas, real Docker", d.RolloutReplicas)
	n := d.RolloutReplicas
	var rows []Row
	if d.Swarm != "" {
		rows = append(rows, Row{Part: part, Measure: "Swarm", Result: d.Swarm, Verdict: NotAvailable})
	}
	for _, s := range rolloutStrategies() {
		// a part that failed before its first sample has none to show
		var r RolloutResult
		if i := slices.IndexFunc(d.Rollouts, func(r RolloutResult) bool { return r.Strategy == s.name }); i >= 0 {
			r = d.Rollouts[i]
		}
		rows = append(rows,
			Row{Part: part, Measure: fmt.Sprintf("%s: manager, spec write → every replica on the new image and status Progressing/RolloutComplete, updatedReplicas %d", s.desc, n), Result: spread(r.Manager)},
			Row{Part: part, Measure: fmt.Sprintf("  of which: → the %d-th new container running", n), Result: spread(r.ManagerRunning)},
			Row{Part: part, Measure: "  of which: → that status in etcd", Result: spread(r.ManagerStatus)},
		)
		if d.Swarm == "" {
			rows = append(rows,
				Row{Part: part, Measure: fmt.Sprintf("%s: Swarm, service update --image (parallelism 1, delay 0s, monitor 0s) → every task on the new image, the old ones stopped", s.name), Result: spread(r.Swarm)},
				Row{Part: part, Measure: fmt.Sprintf("  of which: → the %d-th new container running", n), Result: spread(r.SwarmRunning)},
				Row{Part: part, Measure: "  Swarm: → update state completed", Result: spread(r.SwarmCompleted)},
			)
		}
		rr := ratio(r.Manager.Median(), r.Swarm.Median())
		rows = append(rows, Row{Part: part, Measure: s.name + ": ratio manager/Swarm (of the medians)", Result: fmtRatio(rr),
			Target: fmt.Sprintf("≤ %.2f", targetRolloutRatio), Verdict: judge(len(r.Manager) > 0 && len(r.Swarm) > 0, rr <= targetRolloutRatio)})
		if len(r.ManagerCalls) > 0 {
			rows = append(rows, Row{Part: part, Measure: s.name + ": task-control calls per rolling update, manager (its /metrics)", Result: fmtCalls(r.ManagerCalls)})
		}
	}
	return rows
}

// RenderText renders rows as an aligned plain-text table, with a part's
// name on its first row only.
func RenderText(rows []Row) string {
	cells := [][]string{{"Part", "Measure", "Result", "Target", "Verdict"}}
	for i, r := range rows {
		part := r.Part
		if i > 0 && rows[i-1].Part == part {
			part = ""
		}
		cells = append(cells, []string{part, r.Measure, r.Result, r.Target, r.Verdict.String()})
	}
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	rule := make([]string, len(widths))
	for i, w := range widths {
		rule[i] = strings.Repeat("-", w)
	}
	cells = slices.Insert(cells, 1, rule)
	var b strings.Builder
	for _, row := range cells {
		var line strings.Builder
		for i, c := range row {
			line.WriteString(c)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
