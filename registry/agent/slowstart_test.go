package agent

import (
	"errors"
	"sync"
	"testing"
)

func TestSlowStartBatchDoublesUntilDone(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	ok, errs := slowStartBatch(10, 1, func(int) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return nil
	})
	if ok != 10 || len(errs) != 0 || calls != 10 {
		t.Errorf("got %d ok, %d errors, %d calls; want 10, 0, 10", ok, len(errs), calls)
	}
}

func TestSlowStartBatchStopsAtFirstFailingBatch(t *testing.T) {
	// batches 1, 2, 4, 8: the call with index 3 is in the third batch
	// (indexes 3..6), so 7 calls are made and the fourth batch never runs.
	var mu sync.Mutex
	var seen []int
	ok, errs := slowStartBatch(100, 1, func(i int) error {
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
		if i == 3 {
			return errors.New("no such image")
		}
		return nil
	})
	if len(seen) != 7 {
		t.Errorf("made %d calls, want 7 (batches 1, 2, 4)", len(seen))
	}
	if ok != 6 || len(errs) != 1 {
		t.Errorf("got %d ok and %d errors, want 6 and 1", ok, len(errs))
	}
}

func TestSlowStartBatchFailingFirstCallMakesOneCall(t *testing.T) {
	calls := 0
	ok, errs := slowStartBatch(100, 1, func(int) error {
		calls++
		return errors.New("daemon refused")
	})
	if calls != 1 || ok != 0 || len(errs) != 1 {
		t.Errorf("got %d calls, %d ok, %d errors; want 1, 0, 1", calls, ok, len(errs))
	}
}
