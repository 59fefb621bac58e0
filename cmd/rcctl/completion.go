package main

// Shell completion of controller ids. "rcctl completion bash|zsh|fish|
// powershell" (cobra's) prints a script that asks rcctl itself, through the
// hidden "rcctl __complete ...", what may follow the words typed so far;
// for the commands that take an ID, the answer is the controllers in etcd.
// A completion runs while someone waits at a prompt: it gives up after a
// short timeout, and when etcd cannot be asked it offers nothing rather
// than an error.

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the etcd requests of one completion, and
// --etcd-dial-timeout bounds it further.
const completionTimeout = 2 * time.Second

// completeID is the ValidArgsFunction of the commands that take one
// controller ID: the ids starting with what has been typed, and no file
// names.
func (c *cli) completeID(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp // the ID is given
	}
	ids, err := c.controllerIDs(cmd.Context())
	if err != nil {
		// seen only with BASH_COMP_DEBUG_FILE set: stderr would show in
		// the shell
		cobra.CompDebugln("rcctl: complete controller ids: "+err.Error(), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, id := range ids {
		if strings.HasPrefix(id, toComplete) {
			out = append(out, id)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeSetImage is the ValidArgsFunction of set image: a controller
// ID, then CONTAINER= for each container of its template not given yet.
func (c *cli) completeSetImage(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return c.completeID(cmd, args, toComplete)
	}
	if strings.Contains(toComplete, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp // the image is the user's
	}
	names, err := c.containerNames(cmd.Context(), args[0])
	if err != nil {
		cobra.CompDebugln("rcctl: complete container names: "+err.Error(), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	given := map[string]bool{}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a, "=")
		given[name] = true
	}
	var out []cobra.Completion
	for _, name := range names {
		if !given[name] && strings.HasPrefix(name+"=", toComplete) {
			out = append(out, name+"=")
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// containerNames lists the names of the containers of controller id's
// template, in the manifest's order.
func (c *cli) containerNames(ctx context.Context, id string) ([]string, error) {
	ctx, cn, done, err := c.completionConn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	spec, err := cn.getController(ctx, id)
	if err != nil {
		return nil, err
	}
	if spec.Err != nil {
		return nil, spec.Err
	}
	var names []string
	for _, ctr := range spec.Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers {
		names = append(names, ctr.Name)
	}
	return names, nil
}

// completionConn connects with the global flags, within the completion
// timeout; done closes the connection and ends ctx.
func (c *cli) completionConn(ctx context.Context) (context.Context, *conn, func(), error) {
	if err := c.readEnv(); err != nil {
		return nil, nil, nil, err
	}
	if err := c.opts.validate(); err != nil {
		return nil, nil, nil, err
	}
	short := *c
	short.opts.dialTimeout = min(c.opts.dialTimeout, completionTimeout)
	ctx, cancel := context.WithTimeout(ctx, short.opts.dialTimeout)
	cn, err := short.connect(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, cn, func() { cn.close(); cancel() }, nil
}

// controllerIDs lists the ids of the stored controllers, in key order,
// with the connection the global flags describe.
func (c *cli) controllerIDs(ctx context.Context) ([]string, error) {
	ctx, cn, done, err := c.completionConn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	specs, err := cn.listControllers(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	return ids, nil
}
