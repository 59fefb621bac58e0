package main

// rollout status follows a controller's rollout, as kubectl rollout status
// does: a line each time the progress changes, then success once the
// manager has observed the newest spec and reports the rollout complete,
// or a failure when it reports the rollout blocked (a slot fits no node)
// or stalled (past its progress deadline), refuses the spec, or --timeout
// passes. It watches the spec
// and the status (follow in wait.go); it never writes.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// defaultRolloutTimeout bounds rollout status when --timeout is not given:
// the default progress deadline (600s) and a little more, so that a
// stalled rollout is reported as the manager reports it, not as a timeout.
const defaultRolloutTimeout = 11 * time.Minute

func (c *cli) rolloutStatusCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status ID [--timeout D]",
		Short: "show the progress of a rollout until it completes",
		Long: `Rollout status prints the progress of the controller's rollout each time it
changes, as the manager reports it, and exits 0 once the manager has seen the
newest spec and every replica runs the current template and is available.
It prints why replicas are not ready as soon as the manager says it (slots
that fit no node, a failed create, a crash loop). It fails at once when the
manager reports the controller blocked (a slot fits no node: the rollout
cannot progress without a change), and when it reports the rollout stalled
(no progress for the spec's progressDeadlineSeconds), refuses the spec, or
--timeout passes.`,
		Args:              oneID("status"),
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return usageErrorf("rollout status: --timeout must be positive, got %s", timeout)
			}
			return c.rolloutStatus(cmd.Context(), args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", defaultRolloutTimeout, "how long to wait for the rollout to complete")
	return cmd
}

func (c *cli) rolloutStatus(ctx context.Context, id string, timeout time.Duration) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	first, last := true, ""
	warn := troubleWarner(c)
	err = follow(ctx, cn, id, func(s snapshot) (bool, error) {
		if s.deleted {
			if first {
				return false, fmt.Errorf("controller %q not found", id)
			}
			return false, fmt.Errorf("controller %q was deleted while waiting for its rollout", id)
		}
		first = false
		if s.status != nil && s.status.ObservedRevision >= s.spec.ModRevision {
			warn(s.status) // an older spec's failures may be gone
		}
		p := rolloutProgress(id, s)
		if p.err != nil {
			return false, p.err
		}
		if p.done {
			fmt.Fprintf(c.stdout, "rollout of %s complete\n", id)
			return true, nil
		}
		if p.waiting != last {
			fmt.Fprintf(c.stdout, "Waiting for rollout of %s: %s...\n", id, p.waiting)
			last = p.waiting
		}
		return false, nil
	})
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		switch last {
		case "":
			last = "nothing read from etcd"
		case noStatus:
			last += ": is it running?"
		}
		return fmt.Errorf("rollout of %s not complete after %s (%s)", id, timeout, last)
	}
	return err
}

// noStatus is what rollout status waits for before the manager writes a
// status.
const noStatus = "the manager has written no status yet"

// rolloutState is where a rollout stands: done, failed (err), or still
// waiting for what waiting says.
type rolloutState struct {
	done    bool
	err     error
	waiting string
}

// rolloutProgress reads the state of a rollout from a controller's spec
// and status. Only a status that has observed the spec's revision counts:
// an older one describes the rollout of an older spec.
func rolloutProgress(id string, s snapshot) rolloutState {
	st, rc := s.status, s.spec.Controller
	if st == nil {
		return rolloutState{waiting: noStatus}
	}
	if st.ObservedRevision < s.spec.ModRevision {
		return rolloutState{waiting: fmt.Sprintf("the manager has not seen revision %d of the spec yet", s.spec.ModRevision)}
	}
	if cond := invalidSpec(st); cond != nil {
		return rolloutState{err: fmt.Errorf("rollout of %s: the manager refused the spec: %s", id, cond.Message)}
	}
	if rc == nil {
		// the manager would have said InvalidSpec (reason Undecodable)
		return rolloutState{waiting: "the stored spec does not decode (fix it with rcctl apply)"}
	}
	prog := st.FindCondition(api.ConditionProgressing)
	if prog == nil {
		// a manager that does not report rollouts
		return rolloutState{waiting: fmt.Sprintf("%d of %d updated, %d available (the manager reports no Progressing condition)",
			st.UpdatedReplicas, rc.DesiredState.Replicas, st.AvailableReplicas)}
	}
	switch {
	case prog.Status == "False":
		switch prog.Reason {
		case api.ReasonBlocked:
			return rolloutState{err: fmt.Errorf("rollout of %s is blocked (it cannot progress without a change): %s", id, prog.Message)}
		case api.ReasonProgressDeadlineExceeded:
			return rolloutState{err: fmt.Errorf("rollout of %s exceeded its progress deadline: %s", id, prog.Message)}
		case api.ReasonRolledBack:
			return rolloutState{err: fmt.Errorf("rollout of %s failed and was rolled back (the spec still names the failed template): %s", id, prog.Message)}
		case api.ReasonRollbackFailed:
			return rolloutState{err: fmt.Errorf("rollout of %s failed, and so did its rollback: %s", id, prog.Message)}
		}
		return rolloutState{err: fmt.Errorf("rollout of %s failed (%s): %s", id, prog.Reason, prog.Message)}
	case prog.Reason == api.ReasonRolloutComplete:
		return rolloutState{done: true}
	case rc.DesiredState.Strategy().Type == api.OnDelete:
		// kubectl too refuses to wait for an OnDelete rollout: nothing
		// moves it but someone removing containers
		return rolloutState{err: fmt.Errorf("rollout of %s does not finish by itself: its updateStrategy is %s (%s)", id, api.OnDelete, prog.Message)}
	}
	return rolloutState{waiting: ctlview.OrNone(prog.Message)}
}
