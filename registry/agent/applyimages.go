package agent

// This file is the step of apply before the creates: the engine must have
// the template's images, as their pull policies say (docs/CONTRACT.md,
// Images). A template not proven yet asks the engine once per image, not a
// failed create per replica; a missing image is pulled beside the sync
// (pulls.go) while the slots wait, reported as pulling.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// pullingImage is an image the creates of a sync wait for.
type pullingImage struct {
	image string
	since time.Time
}

// readyImages returns true when the creates may go out. Otherwise out
// says why they wait: a pull under way (pulling), the backoff of a failed
// one (pullErr), or an error of the engine or a missing image under Never
// (createErrs).
func (rm *Agent) readyImages(ctx context.Context, id string, d decision, creates []taskCreate, out *outcome) bool {
	ready := true
	for _, need := range d.images {
		var w pullWait
		switch need.policy {
		case api.PullAlways:
			since := d.state.pullSince
			if since.IsZero() {
				since = rm.now()
			}
			w = rm.pulls.want(id, need.image, since, true)
			if !w.ready {
				out.pullSince = since
			}
		case api.PullNever:
			if d.proven {
				continue
			}
			if err := rm.taskControl.CheckImage(ctx, need.image); err != nil {
				out.createErrs = []error{fmt.Errorf("create %s: %w (imagePullPolicy %s)", creates[0].Name, err, api.PullNever)}
				return false
			}
			continue
		default: // IfNotPresent
			failed := rm.pulls.failing(need.image) != nil
			if d.proven && !failed {
				continue
			}
			checked := rm.now()
			// after a failed pull the engine is known to lack the image:
			// the next attempt pulls without asking, so that a bad image
			// costs one call per attempt
			if !failed {
				err := rm.taskControl.CheckImage(ctx, need.image)
				switch {
				case err == nil:
					continue
				case !errors.Is(err, api.ErrImageNotFound):
					out.createErrs = []error{fmt.Errorf("create %s: %w", creates[0].Name, err)}
					return false
				}
			}
			w = rm.pulls.want(id, need.image, checked, false)
		}
		switch {
		case w.ready:
		case w.pulling:
			ready = false
			out.pulling = append(out.pulling, pullingImage{image: need.image, since: w.since})
		default:
			ready = false
			if out.pullErr == nil || w.retryIn < out.pullRetry {
				out.pullErr, out.pullRetry = w.err, w.retryIn
			}
		}
	}
	if !ready {
		for _, c := range creates {
			out.waiting = append(out.waiting, slotOf(api.Task{Labels: c.Labels}))
		}
	}
	return ready
}
