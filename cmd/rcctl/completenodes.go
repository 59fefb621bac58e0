package main

// Shell completion of node names, for cordon, uncordon, drain and label
// node: the registered nodes and those with a config, starting with what
// has been typed; for label node, the word "node" first, then a node,
// then KEY- for each label of the node's config.

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// completeNodes is the ValidArgsFunction of the commands that take one
// NODE.
func (c *cli) completeNodes(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, _, err := c.nodeNames(cmd.Context())
	if err != nil {
		cobra.CompDebugln("rcctl: complete node names: "+err.Error(), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeLabel is the ValidArgsFunction of label: "node", a NODE, then
// the removal of each label the node's config sets.
func (c *cli) completeLabel(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return withPrefix([]string{"node"}, toComplete), cobra.ShellCompDirectiveNoFileComp
	case 1:
		return c.completeNodes(cmd, nil, toComplete)
	}
	_, labels, err := c.nodeNames(cmd.Context())
	if err != nil {
		cobra.CompDebugln("rcctl: complete node labels: "+err.Error(), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var removals []string
	for _, k := range slices.Sorted(maps.Keys(labels[args[1]])) {
		removals = append(removals, k+"-")
	}
	return withPrefix(removals, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func withPrefix(words []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}

// nodeNames lists the registered nodes and those with a config, in name
// order, and the labels of each config.
func (c *cli) nodeNames(ctx context.Context) ([]string, map[string]map[string]string, error) {
	ctx, cn, done, err := c.completionConn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	nodes, err := cn.listNodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	configs, err := cn.listNodeConfigs(ctx)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	labels := map[string]map[string]string{}
	for _, n := range nodes {
		seen[n.Name] = true
	}
	for name, cfg := range configs {
		seen[name] = true
		labels[name] = cfg.Labels
	}
	return slices.Sorted(maps.Keys(seen)), labels, nil
}
