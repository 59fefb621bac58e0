package registry

import (
	"testing"
	"time"
)

func TestSoonerKeepsTheSoonestWaitAndIgnoresNone(t *testing.T) {
	for _, tt := range []struct{ cur, after, want time.Duration }{
		{0, 0, 0},
		{0, time.Second, time.Second},
		{time.Second, 0, time.Second},
		{time.Second, -time.Second, time.Second},
		{2 * time.Second, time.Second, time.Second},
		{time.Second, 2 * time.Second, time.Second},
	} {
		if got := Sooner(tt.cur, tt.after); got != tt.want {
			t.Errorf("Sooner(%s, %s) = %s, want %s", tt.cur, tt.after, got, tt.want)
		}
	}
}
