package bench

// This file makes the rows of the pull part: 0→N and N→0 of an image the
// engine must pull from a registry, by the manager and by the engine
// driven directly.

import "fmt"

// targetPullConvergenceRatio bounds a new controller's 0→N of an image
// the engine lacks over N parallel docker run -d of it (each pulling), of
// the medians (issue 27).
const targetPullConvergenceRatio = 1.05

// pullPart names the pull part's rows.
const pullPart = "1d. Convergence of an image pulled from a registry"

func pullConvergenceRows(p *PullConvergenceResult) []Row {
	if p == nil {
		return []Row{{Part: pullPart + ", real Docker", Measure: "pulled image", Result: "not measured", Verdict: NotAvailable}}
	}
	n := p.Replicas
	part := fmt.Sprintf("%s, N=%d, real Docker", pullPart, n)
	up := fmt.Sprintf("0→%d", n)
	down := fmt.Sprintf("%d→0", n)
	rows := []Row{
		{Part: part, Measure: "image, removed from the engine before each 0→N (none of its layers left)", Result: p.Image},
		{Part: part, Measure: fmt.Sprintf("%s manager, new controller each round (spec write → the %d-th start event; one pull, then the creates)", up, n), Result: spread(p.ManagerUp)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d parallel docker run -d: create, on no such image pull and create again, start; from the first create)", up, n), Result: spread(p.RawUp)},
		ratioRow(part, up+" pulled: ratio manager (new controller)/raw (of the medians)", p.ManagerUp, p.RawUp, targetPullConvergenceRatio),
		{Part: part, Measure: down + " manager (scale to 0 → all removed)", Result: spread(p.ManagerDown)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d parallel rm -f)", down, n), Result: spread(p.RawDown)},
		{Part: part, Measure: down + " ratio manager/raw", Result: fmtRatio(ratio(p.ManagerDown.Median(), p.RawDown.Median()))},
	}
	if len(p.ManagerDockerCalls) > 0 {
		rows = append(rows,
			Row{Part: part, Measure: fmt.Sprintf("task-control calls per %s→0 of a new controller and its deletion, manager (its /metrics)", up), Result: fmtCalls(p.ManagerDockerCalls)},
			Row{Part: part, Measure: fmt.Sprintf("Docker API calls per %s→0, raw Docker", up), Result: "per container: create, a pull and a second create if the image was missing, start, remove"})
	}
	return rows
}
