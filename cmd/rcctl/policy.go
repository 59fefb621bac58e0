package main

// What a spec is checked against before rcctl writes it (docs/CONTRACT.md,
// Spec): the contract's rules of shape, which need no etcd, and the policy
// the leader published at <prefix>/meta/policy, its --allow-* flags and
// --max-replicas, so that a spec the manager would refuse is refused here,
// with the field and the flag that would allow it, instead of being
// written and then carrying an InvalidSpec condition. Without a published
// policy (no manager has led yet, or the managers predate the key), rcctl
// checks the shape only and leaves the policy to the manager, as before.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// policyState is the published policy as this invocation read it, once.
type policyState struct {
	// policy is nil when none is published or it could not be read.
	policy *registry.Policy
	key    string
}

// validateShape checks a spec as far as it can without etcd: every rule
// but the policy, and the limit of desiredState.replicas only when
// --max-replicas is given (the published policy may allow more than its
// default); negative replicas are refused here. The commands that write
// run validate once connected.
func (c *cli) validateShape(rc *api.ReplicationController, id string) error {
	if !c.maxReplicasGiven() && rc.DesiredState.Replicas > 0 {
		shallow := *rc // Validate reads only
		shallow.DesiredState.Replicas = 0
		rc = &shallow
	}
	return api.Validate(rc, api.ValidateOptions{Key: id, MaxReplicas: c.opts.maxReplicas, Policy: api.AllowAllPolicy()})
}

// validate checks a spec as the manager will, before anything is written
// under the key of id: the rules of shape and, when a leader has
// published its policy, that policy, whose refusals name the field and
// the flag that would allow it. The replica limit is the policy's
// --max-replicas (the lower of it and rcctl's --max-replicas when that is
// given), else rcctl's --max-replicas.
func (c *cli) validate(ctx context.Context, cn *conn, rc *api.ReplicationController, id string) error {
	ps := c.readPolicy(ctx, cn)
	opts := api.ValidateOptions{Key: id, MaxReplicas: c.opts.maxReplicas, Policy: api.AllowAllPolicy()}
	policyLimit := false
	if p := ps.policy; p != nil {
		opts.Policy = p.Security()
		if p.MaxReplicas > 0 && (!c.maxReplicasGiven() || p.MaxReplicas < c.opts.maxReplicas) {
			opts.MaxReplicas, policyLimit = p.MaxReplicas, true
		}
	}
	err := api.Validate(rc, opts)
	var ve *api.ValidationError
	if !policyLimit || !errors.As(err, &ve) {
		return err
	}
	for i, fe := range ve.Errors {
		if fe.Field == "desiredState.replicas" && rc.DesiredState.Replicas > opts.MaxReplicas {
			ve.Errors[i].Detail = fmt.Sprintf("refused: the manager was started with --max-replicas %d, got %d", opts.MaxReplicas, rc.DesiredState.Replicas)
		}
	}
	return err
}

// readPolicy returns the published policy, read from etcd on the first
// call. A policy that cannot be read or does not decode gets a warning:
// the spec is then checked for its shape only, as with none published.
func (c *cli) readPolicy(ctx context.Context, cn *conn) *policyState {
	if c.policy != nil {
		return c.policy
	}
	c.policy = &policyState{key: cn.store.PolicyKey()}
	p, err := call(ctx, cn, func(ctx context.Context) (registry.Policy, error) { return cn.store.GetPolicy(ctx) })
	switch {
	case err == nil:
		c.policy.policy = &p
	case errors.Is(err, registry.ErrNotFound):
	default:
		fmt.Fprintf(c.stderr, "warning: the manager's policy cannot be read, so only the spec's shape is checked (the manager still refuses what its flags do not allow): %s\n", oneLine(err))
	}
	return c.policy
}

// maxReplicasGiven reports whether --max-replicas is on the command line.
func (c *cli) maxReplicasGiven() bool {
	return c.globalFlags != nil && c.globalFlags.Changed("max-replicas")
}

// invalid wraps a validation error of controller id for the user: "is
// refused by the manager's policy" when every problem is a refusal of the
// published policy, "is invalid" otherwise; how says after what (such as
// "after scaling"), and may be empty.
func invalid(id, how string, err error) error {
	word := "is invalid"
	var ve *api.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 && allRefused(ve.Errors) {
		word = "is refused by the manager's policy"
	}
	if how != "" {
		word += " " + how
	}
	return fmt.Errorf("controller %q %s (nothing written): %w", id, word, err)
}

// allRefused reports whether every error is a refusal of the policy.
func allRefused(errs []api.FieldError) bool {
	for _, fe := range errs {
		if !isRefusal(fe) {
			return false
		}
	}
	return true
}

// isRefusal reports whether fe is the policy refusing a field, as api
// words it ("refused: the manager was not started with --allow-...") and
// as validate words the replica limit.
func isRefusal(fe api.FieldError) bool {
	return strings.HasPrefix(fe.Detail, "refused: the manager was ")
}
