package bench

// This file makes the rows of the health part: a health-checked image,
// 0→N and N→0 by the manager and by the engine driven directly, until
// every container has started and until every one is healthy.

import "fmt"

// targetHealthConvergenceRatio bounds a new controller's 0→N of a
// health-checked image over N parallel docker run -d of it (issue 16), of
// the medians: until the N-th container has started, and until the N-th
// is healthy.
const targetHealthConvergenceRatio = 1.05

// healthPart names the health part's rows.
const healthPart = "1c. Convergence of a health-checked image"

func healthConvergenceRows(h *HealthConvergenceResult) []Row {
	if h == nil {
		return []Row{{Part: healthPart + ", real Docker", Measure: "health-checked image", Result: "not measured", Verdict: NotAvailable}}
	}
	n := h.Replicas
	part := fmt.Sprintf("%s, N=%d, real Docker", healthPart, n)
	up := fmt.Sprintf("0→%d", n)
	down := fmt.Sprintf("%d→0", n)
	rows := []Row{
		{Part: part, Measure: "image: the demo task with", Result: "HEALTHCHECK " + h.HealthCheck},
		{Part: part, Measure: fmt.Sprintf("%s running: manager, new controller each round (spec write → the %d-th start event)", up, n), Result: spread(h.ManagerUp)},
		{Part: part, Measure: fmt.Sprintf("%s running: raw Docker (%d parallel docker run -d, from the first create)", up, n), Result: spread(h.RawUp)},
		ratioRow(part, up+" running: ratio manager (new controller)/raw (of the medians)", h.ManagerUp, h.RawUp, targetHealthConvergenceRatio),
		{Part: part, Measure: fmt.Sprintf("%s healthy: manager (same start → the %d-th health_status: healthy event)", up, n), Result: spread(h.ManagerHealthy)},
		{Part: part, Measure: up + " healthy: raw Docker", Result: spread(h.RawHealthy)},
		ratioRow(part, up+" healthy: ratio manager (new controller)/raw (of the medians)", h.ManagerHealthy, h.RawHealthy, targetHealthConvergenceRatio),
		{Part: part, Measure: down + " manager (scale to 0 → all removed), once all are healthy", Result: spread(h.ManagerDown)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d parallel rm -f)", down, n), Result: spread(h.RawDown)},
		{Part: part, Measure: down + " ratio manager/raw", Result: fmtRatio(ratio(h.ManagerDown.Median(), h.RawDown.Median()))},
	}
	if len(h.ManagerDockerCalls) > 0 {
		rows = append(rows,
			Row{Part: part, Measure: fmt.Sprintf("task-control calls per %s→0 of a new controller and its deletion, manager (its /metrics)", up), Result: fmtCalls(h.ManagerDockerCalls)},
			Row{Part: part, Measure: fmt.Sprintf("Docker API calls per %s→0, raw Docker", up), Result: fmt.Sprintf("create %d, start %d, remove %d", n, n, n)},
			inspectsRow(part, n, h.ManagerDockerCalls))
	}
	return rows
}
