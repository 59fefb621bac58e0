package agent

// The delays of the node's backoffs, and the crash loop's condition, as pure
// functions; machinery_test.go runs them through a host.

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/replication-manager/replication-manager/api"
)

func TestBackoffGrowsToItsCap(t *testing.T) {
	for _, tt := range []struct {
		name   string
		delays func() wait.Backoff
		want   []time.Duration
	}{
		{"create", createDelays, []time.Duration{
			time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
			64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute,
		}},
		{"crash", crashDelays, []time.Duration{
			100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
			1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond,
			25600 * time.Millisecond, 51200 * time.Millisecond, time.Minute, time.Minute,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b backoff
			at := time.Unix(1000, 0)
			var got []time.Duration
			for range tt.want {
				b = b.failed(at, tt.delays)
				got = append(got, b.wait(at))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("delays = %v, want %v", got, tt.want)
			}
			last := tt.want[len(tt.want)-1]
			if w := b.wait(at.Add(time.Second)); w != last-time.Second {
				t.Errorf("wait 1s after the last failure = %s, want %s", w, last-time.Second)
			}
			if w := b.wait(at.Add(last)); w != 0 {
				t.Errorf("wait once the last delay is over = %s, want 0", w)
			}
			if b.failures != len(tt.want) {
				t.Errorf("failures = %d, want %d", b.failures, len(tt.want))
			}
		})
	}
	if w := (backoff{}).wait(time.Unix(1000, 0)); w != 0 {
		t.Errorf("wait of a clear backoff = %s, want 0", w)
	}
}

func TestCrashLoopConditionCountsTheCrashesAndTheWaitLeft(t *testing.T) {
	at := time.Unix(1000, 0)
	dead := func(id string, finished time.Time) api.Task {
		return api.Task{ID: id, Name: "web-1", ExitCode: 3, StartedAt: finished.Add(-time.Second), FinishedAt: finished}
	}
	h, crashes := crashHistory{}.observe([]api.Task{dead("a", at), dead("b", at.Add(50*time.Millisecond))})
	if len(crashes) != 2 {
		t.Fatalf("%d crashes, want 2", len(crashes))
	}
	// the second crash waits 200ms from its end: 150ms are left at 100ms
	c := h.condition(at.Add(100 * time.Millisecond))
	want := "container web-1 exited with code 3 after 1s; 2 crashes in a row; next start in 150ms"
	if c == nil || c.Message != want {
		t.Errorf("CrashLoop condition = %+v, want message %q", c, want)
	}
}
