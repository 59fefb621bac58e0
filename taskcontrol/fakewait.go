package taskcontrol

// This file is the Fake's WaitTask: a container ends when Fake.Exit says
// so at once, or when SetState stops it.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// fakeWaitPoll is how often WaitTask looks at a container that SetState
// has to end.
const fakeWaitPoll = 5 * time.Millisecond

// WaitTask waits until container id is not running and returns its exit
// code and the last tailLines lines of its output.
func (f *Fake) WaitTask(ctx context.Context, id string, tailLines int) (api.TaskExit, error) {
	f.record(&f.counts.Wait, "wait "+id)
	if f.Exit != nil {
		if t, err := f.InspectTask(ctx, id); err == nil && t.Active() {
			if exit, ok := f.Exit(t); ok {
				f.SetOutput(id, exit.Output)
				f.SetState(id, api.StateExited, exit.ExitCode)
			}
		}
	}
	tick := time.NewTicker(fakeWaitPoll)
	defer tick.Stop()
	for {
		f.mu.RLock()
		t, ok := f.byID[id]
		var exit api.TaskExit
		active := ok && (t.Active() || t.State == api.StateCreated)
		if ok {
			exit = api.TaskExit{ExitCode: t.ExitCode, Output: lastLines(t.output, tailLines)}
		}
		f.mu.RUnlock()
		switch {
		case !ok:
			return api.TaskExit{}, fmt.Errorf("wait for %s: %w", id, api.ErrTaskNotFound)
		case !active:
			return exit, nil
		}
		select {
		case <-ctx.Done():
			return api.TaskExit{}, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case <-tick.C:
		}
	}
}

// SetOutput sets what WaitTask says container id wrote.
func (f *Fake) SetOutput(id, output string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.byID[id]; ok {
		t.output = output
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}
