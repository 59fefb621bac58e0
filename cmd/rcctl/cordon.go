package main

// This file is the commands that change a node's config
// (docs/CONTRACT.md, Node maintenance), with kubectl's habits: cordon
// (availability pause: no slot is newly placed there), uncordon (active)
// and label node (labels merged over the node's --node-labels). drain is
// in drain.go. Each reads /registry/nodeconfig/<node>, changes it and
// writes it back only if nobody wrote it meanwhile.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/replication-manager/replication-manager/api"
)

func (c *cli) cordonCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "cordon NODE",
		Short: "mark a node paused: no slot is newly placed there",
		Long: `Cordon sets the node's availability to pause in /registry/nodeconfig/NODE: the
leader places no new slot there, and the slots there stay. rcctl uncordon NODE
makes it active again.`,
		ValidArgsFunction: c.completeNodes,
		RunE: func(cmd *cobra.Command, args []string) error {
			node, err := oneNode("cordon", args)
			if err != nil {
				return err
			}
			return c.setAvailability(cmd.Context(), node, api.NodePause, "cordoned")
		},
	}
}

func (c *cli) uncordonCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "uncordon NODE",
		Short: "mark a node active again: it takes new slots",
		Long: `Uncordon sets the node's availability to active in /registry/nodeconfig/NODE,
after a cordon or a drain: the leader places slots there again. The slots that
moved off it do not come back on their own; a scale or a later move may put
slots there.`,
		ValidArgsFunction: c.completeNodes,
		RunE: func(cmd *cobra.Command, args []string) error {
			node, err := oneNode("uncordon", args)
			if err != nil {
				return err
			}
			return c.setAvailability(cmd.Context(), node, api.NodeActive, "uncordoned")
		},
	}
}

// oneNode checks that args are one node name.
func oneNode(command string, args []string) (string, error) {
	if len(args) != 1 {
		return "", usageErrorf("%s: takes one NODE, got %d arguments", command, len(args))
	}
	if err := api.ValidateNodeName(args[0]); err != nil {
		return "", usageErrorf("%s: node name %s", command, err)
	}
	return args[0], nil
}

// setAvailability writes node's availability and says so as kubectl
// does: "node/a cordoned", or "node/a already cordoned".
func (c *cli) setAvailability(ctx context.Context, node string, a api.NodeAvailability, done string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	already := false
	if _, err := cn.updateNodeConfig(ctx, node, func(cfg *api.NodeConfig) error {
		already = cfg.Effective() == a
		cfg.Availability = a
		return nil
	}); err != nil {
		return err
	}
	if already {
		fmt.Fprintf(c.stdout, "node/%s already %s\n", node, done)
		return nil
	}
	fmt.Fprintf(c.stdout, "node/%s %s\n", node, done)
	return nil
}

func (c *cli) labelCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "label node NODE KEY=VALUE... KEY-...",
		Short: "set or remove a node's labels, without a restart",
		Long: `Label node sets (KEY=VALUE) and removes (KEY-) labels in
/registry/nodeconfig/NODE. The leader merges them over the node's --node-labels,
and these win on a clash; placement and nodeSelector use the merged labels at
once, and slots whose node no longer matches move, paced. A KEY- removes only a
label of the key: one of --node-labels stays until the manager restarts
without it.`,
		ValidArgsFunction: c.completeLabel,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 3 || args[0] != "node" {
				return usageErrorf("label: want label node NODE KEY=VALUE... KEY-...")
			}
			node, err := oneNode("label", args[1:2])
			if err != nil {
				return err
			}
			set, remove, err := parseLabelChanges(args[2:])
			if err != nil {
				return err
			}
			return c.label(cmd.Context(), node, set, remove)
		},
	}
}

// parseLabelChanges reads KEY=VALUE and KEY- arguments.
func parseLabelChanges(args []string) (set map[string]string, remove []string, err error) {
	set = map[string]string{}
	for _, a := range args {
		if k, ok := strings.CutSuffix(a, "-"); ok && !strings.Contains(a, "=") {
			if k == "" {
				return nil, nil, usageErrorf("label: %q: want KEY=VALUE or KEY-", a)
			}
			remove = append(remove, k)
			continue
		}
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, nil, usageErrorf("label: %q: want KEY=VALUE or KEY-", a)
		}
		if _, dup := set[k]; dup || slices.Contains(remove, k) {
			return nil, nil, usageErrorf("label: key %q given twice", k)
		}
		set[k] = v
	}
	for _, k := range remove {
		if _, dup := set[k]; dup {
			return nil, nil, usageErrorf("label: key %q given twice", k)
		}
	}
	if err := (api.NodeConfig{Labels: set}).Validate(); err != nil {
		return nil, nil, usageErrorf("label: %s", oneLine(err))
	}
	return set, remove, nil
}

func (c *cli) label(ctx context.Context, node string, set map[string]string, remove []string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	if _, err := cn.updateNodeConfig(ctx, node, func(cfg *api.NodeConfig) error {
		labels := maps.Clone(cfg.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, set)
		for _, k := range remove {
			delete(labels, k)
		}
		cfg.Labels = labels
		if len(labels) == 0 {
			cfg.Labels = nil
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "node/%s labeled\n", node)
	return nil
}

// readNodeConfigs reads the nodes' configs. A role that may not read them
// (one made before they existed) gets none, without a word: every node
// is then shown active, with its registered labels.
func readNodeConfigs(ctx context.Context, cn *conn) (map[string]api.NodeConfig, error) {
	configs, err := cn.listNodeConfigs(ctx)
	if errors.Is(err, rpctypes.ErrPermissionDenied) {
		return nil, nil
	}
	return configs, err
}
