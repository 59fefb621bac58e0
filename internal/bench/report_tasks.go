package bench

// This file makes the rows of the tasks part: tasks of several containers,
// 0→N and N→0 by the manager and by the engine driven directly.

import "fmt"

// targetTaskConvergenceRatio bounds a new controller's 0→N of tasks of
// two containers over the same tasks made by plain Docker calls (issue
// 17), of the medians.
const targetTaskConvergenceRatio = 1.10

func taskConvergenceRows(t *TaskConvergenceResult) []Row {
	if t == nil {
		return []Row{{Part: "1b. Convergence of tasks of several containers, real Docker", Measure: "tasks", Result: "not measured", Verdict: NotAvailable}}
	}
	health := "without the prober's health check"
	if t.HealthCheck {
		health = "with the prober's health check"
	}
	part := fmt.Sprintf("1b. Convergence of tasks of %d containers, N=%d tasks (%d containers), real Docker", t.Containers, t.Replicas, t.Replicas*t.Containers)
	up := fmt.Sprintf("0→%d tasks", t.Replicas)
	down := fmt.Sprintf("%d→0 tasks", t.Replicas)
	all := t.Replicas * t.Containers
	return []Row{
		{Part: part, Measure: "task: " + t.Shape, Result: health},
		{Part: part, Measure: fmt.Sprintf("%s manager, new controller each round (spec write → all %d containers running)", up, all), Result: spread(t.ManagerUp)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d at once, each: volume create, docker run -d of the first, docker run -d --network container:<first> of the other; %d docker run -d in all)", up, t.Replicas, all), Result: spread(t.RawUp)},
		ratioRow(part, up+" ratio manager (new controller)/raw (of the medians)", t.ManagerUp, t.RawUp, targetTaskConvergenceRatio),
		{Part: part, Measure: down + " manager (scale to 0 → all containers removed)", Result: spread(t.ManagerDown)},
		{Part: part, Measure: fmt.Sprintf("%s raw Docker (%d at once, each: rm -f of its containers, then volume rm)", down, t.Replicas), Result: spread(t.RawDown)},
		{Part: part, Measure: down + " ratio manager/raw", Result: fmtRatio(ratio(t.ManagerDown.Median(), t.RawDown.Median()))},
		{Part: part, Measure: fmt.Sprintf("task-control calls per 0→%d→0 of a new controller and its deletion, manager (its /metrics)", t.Replicas), Result: fmtCalls(t.ManagerDockerCalls)},
		{Part: part, Measure: fmt.Sprintf("Docker API calls per 0→%d→0, raw Docker", t.Replicas),
			Result: fmt.Sprintf("volume create %d, create %d, start %d, remove %d, volume remove %d", t.Replicas*t.Volumes, all, all, all, t.Replicas*t.Volumes)},
	}
}
