package bench

// This file is the convergence of a health-checked image (part "health",
// issue 16): the demo task built with a HEALTHCHECK every second
// (rm-bench-task:<run>-health), 0→N and N→0 by the manager, a new
// controller each round as in the convergence part, and by the engine
// driven directly (N parallel docker run -d, N parallel rm -f), alternated
// over rounds as the convergence part is. A round times the N-th start
// event, as the other parts do, and from the same start the N-th
// health_status: healthy event; its N→0 begins once every container is
// healthy.

import (
	"context"
	"fmt"
)

// The system labels of the health part's containers.
const (
	healthManagerSystem = "health-manager"
	healthRawSystem     = "health-raw"
)

// healthCheck is the HEALTHCHECK of the part's image, as build-image.sh
// takes it: the demo task's own check (a GET of its /healthz) every
// second, the timeout and retries of the script's default.
const healthCheck = `--interval=1s --timeout=3s --retries=3 CMD ["/task", "healthcheck"]`

// HealthConvergenceResult is the health part: one sample per round and
// system.
type HealthConvergenceResult struct {
	Replicas int `json:"replicas"`
	// HealthCheck is the image's HEALTHCHECK, after the instruction.
	HealthCheck string `json:"healthCheck"`

	// The 0→N is until the N-th start event; the curves have Replicas
	// points.
	ManagerVersusRaw
	// ManagerHealthy and RawHealthy are, per round, from the same start
	// as the 0→N until the N-th health_status: healthy event.
	ManagerHealthy Durations `json:"managerHealthyMs"`
	RawHealthy     Durations `json:"rawHealthyMs"`
}

// measureHealthConvergence builds the health-checked image, runs the
// rounds of the health part and sets res.Health.
func (e *dockerEnv) measureHealthConvergence(ctx context.Context, cfg Config, res *DockerResults) error {
	n := cfg.Replicas
	hr := &HealthConvergenceResult{Replicas: n, HealthCheck: healthCheck}
	res.Health = hr
	// set before the build, so that teardown removes what a failed
	// build left
	e.healthImage = e.image + "-health"
	fmt.Fprintf(e.progress, "health: building image %s with HEALTHCHECK %s\n", e.healthImage, healthCheck)
	if err := buildImage(ctx, e.healthImage, healthCheck); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	manager := e.newControllerRounds("health/manager", healthManagerSystem, "health", e.healthImage).system().
		into(&hr.ManagerUp, &hr.ManagerDown, &hr.ManagerCurves)
	manager.healthyTimes = &hr.ManagerHealthy
	raw := e.rawSystem("health/raw", healthRawSystem, e.healthImage, runContainer).into(&hr.RawUp, &hr.RawDown, &hr.RawCurves)
	raw.healthyTimes = &hr.RawHealthy
	fmt.Fprintf(e.progress, "health: 0→%d of a health-checked image, manager and raw Docker, %d rounds\n", n, cfg.Rounds)
	calls, err := e.convergeRounds(ctx, []*system{manager, raw}, cfg.Rounds, n, n)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	hr.ManagerDockerCalls = calls
	return nil
}
