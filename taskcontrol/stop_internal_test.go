package taskcontrol

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// stopClock is a clock that only sleeps move, and the record of a stop.
type stopClock struct {
	now   time.Time
	steps []string
}

func (c *stopClock) hooks(execErr error, execTakes time.Duration) stopHooks {
	return stopHooks{
		now: func() time.Time { return c.now },
		sleep: func(_ context.Context, d time.Duration) error {
			c.steps = append(c.steps, "sleep "+d.String())
			c.now = c.now.Add(d)
			return nil
		},
		exec: func(ctx context.Context, cmd []string) error {
			c.steps = append(c.steps, "exec "+cmd[0])
			c.now = c.now.Add(execTakes)
			return execErr
		},
		signal: func(_ context.Context, signal string, remaining time.Duration) error {
			c.steps = append(c.steps, "signal "+signal+" "+remaining.String())
			return nil
		},
	}
}

func TestStopGracefullyRunsThePreStopThenTheSignalWithTheRest(t *testing.T) {
	tests := []struct {
		name      string
		plan      stopPlan
		execErr   error
		execTakes time.Duration
		want      []string
		wantErr   bool
	}{
		{"no preStop: the whole grace", stopPlan{Signal: "SIGINT", Grace: 7 * time.Second}, nil, 0,
			[]string{"signal SIGINT 7s"}, false},
		{"a sleep, then the rest", stopPlan{Signal: "SIGINT", Grace: 7 * time.Second, PreStop: &api.PreStop{SleepSeconds: 2}}, nil, 0,
			[]string{"sleep 2s", "signal SIGINT 5s"}, false},
		{"a sleep longer than the grace is cut at it", stopPlan{Grace: 3 * time.Second, PreStop: &api.PreStop{SleepSeconds: 10}}, nil, 0,
			[]string{"sleep 3s", "signal  0s"}, false},
		{"an exec, then the rest", stopPlan{Signal: "SIGTERM", Grace: 10 * time.Second, PreStop: &api.PreStop{Exec: []string{"/drain"}}}, nil, 4 * time.Second,
			[]string{"exec /drain", "signal SIGTERM 6s"}, false},
		{"a failed exec does not hold the stop back", stopPlan{Grace: 10 * time.Second, PreStop: &api.PreStop{Exec: []string{"/drain"}}}, errExecFailed, time.Second,
			[]string{"exec /drain", "signal  9s"}, true},
		{"a grace of 0 runs no preStop", stopPlan{Grace: 0, PreStop: &api.PreStop{SleepSeconds: 2}}, nil, 0,
			[]string{"signal  0s"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &stopClock{now: time.Unix(1000, 0)}
			preStopErr, stopErr := stopGracefully(t.Context(), tt.plan, c.hooks(tt.execErr, tt.execTakes))
			if stopErr != nil {
				t.Fatalf("stop: %v", stopErr)
			}
			if !reflect.DeepEqual(c.steps, tt.want) {
				t.Errorf("steps:\n got %q\nwant %q", c.steps, tt.want)
			}
			if got := errors.Is(preStopErr, api.ErrPreStopFailed); got != tt.wantErr {
				t.Errorf("preStop error %v: wraps ErrPreStopFailed %v, want %v", preStopErr, got, tt.wantErr)
			}
		})
	}
}

func TestContainerConfigRecordsTheStop(t *testing.T) {
	grace := 30
	spec := api.TaskSpec{Name: "web-1", Labels: map[string]string{"a": "b"}, Container: api.Container{
		Image: "demo-task", StopSignal: "SIGINT", StopGracePeriodSeconds: &grace, PreStop: &api.PreStop{SleepSeconds: 2},
	}}
	config, _, err := containerConfig(spec, 0)
	if err != nil {
		t.Fatalf("containerConfig: %v", err)
	}
	if config.StopSignal != "SIGINT" || config.StopTimeout == nil || *config.StopTimeout != 30 {
		t.Errorf("StopSignal %q, StopTimeout %v: want SIGINT and 30", config.StopSignal, config.StopTimeout)
	}
	if got := preStopOfLabels(config.Labels); !reflect.DeepEqual(got, spec.Container.PreStop) {
		t.Errorf("the preStop label reads back as %+v, want %+v", got, spec.Container.PreStop)
	}
	if spec.Labels[api.LabelPreStop] != "" {
		t.Error("the spec's labels were changed")
	}

	capped, _, _ := containerConfig(spec, 6500*time.Millisecond)
	if capped.StopTimeout == nil || *capped.StopTimeout != 6 {
		t.Errorf("capped at 6.5s: StopTimeout %v, want 6 (whole seconds, rounded down)", capped.StopTimeout)
	}

	plain, _, _ := containerConfig(api.TaskSpec{Name: "x", Container: api.Container{Image: "demo-task"}}, 0)
	if plain.StopSignal != api.DefaultStopSignal || plain.StopTimeout != nil || plain.Labels[api.LabelPreStop] != "" {
		t.Errorf("a spec without a stop got %q, %v, %q: want SIGTERM and the node's grace", plain.StopSignal, plain.StopTimeout, plain.Labels[api.LabelPreStop])
	}
}
