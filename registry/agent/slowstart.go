package agent

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// slowStartBatch calls fn count times, in batches that start at initial and
// double (1, 2, 4, ...). The calls of a batch run in parallel; a batch with
// any failure ends the run, so that a failing call (a missing image, a
// refusing daemon) is made a handful of times, not count times. fn gets the
// index of the call, 0..count-1. It returns how many calls succeeded and the
// errors of the failing batch.
func slowStartBatch(count, initial int, fn func(i int) error) (int, []error) {
	succeeded := 0
	for done, batch := 0, max(initial, 1); done < count; batch *= 2 {
		size := min(batch, count-done)
		errs := make([]error, size)
		var wg sync.WaitGroup
		for k := range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[k] = recovered(func() error { return fn(done + k) })
			}()
		}
		wg.Wait()
		var failed []error
		for _, err := range errs {
			if err != nil {
				failed = append(failed, err)
			} else {
				succeeded++
			}
		}
		if len(failed) > 0 {
			return succeeded, failed
		}
		done += size
	}
	return succeeded, nil
}

// errPanic marks an error made from a recovered panic.
var errPanic = errors.New("panic")

// recovered calls fn and turns a panic into an error, so that a bug in a
// goroutine of one sync fails that sync instead of the whole daemon.
func recovered(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanic, r, debug.Stack())
		}
	}()
	return fn()
}
