package main

// run is the 2014 "run": it builds a controller from a few flags, in the
// shape of the 2014 examples (labels name=<id>, the selector equal to the
// labels, one container named after the controller), validates it and
// creates it. It never replaces an existing controller. The container's
// command is either everything after "--", word for word, as with kubectl
// run, or --command, split with shell quoting rules.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/shlex"
	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// runOptions are the flags of rcctl run.
type runOptions struct {
	image    string
	pull     string
	replicas int
	ports    []string
	env      []string
	labels   []string
	command  string
	// argv is the command given after "--", exactly as given; nil when
	// there is none.
	argv []string
}

func (c *cli) runCommand() *cobra.Command {
	var o runOptions
	var wait waitFlags
	cmd := &cobra.Command{
		Use:   "run ID --image IMAGE [--image-pull-policy P] [--replicas N] [--port HOST:CONTAINER]... [--env NAME=VALUE]... [--label KEY=VALUE]... [--wait [--timeout D]] [--command \"...\" | -- COMMAND [ARGS...]]",
		Short: "create a controller from an image (the 2014 run)",
		Long: `Run creates a controller that keeps N containers of IMAGE running. Its labels,
its selector and its task labels are name=ID unless --label is given. It
fails if the controller exists: change an existing one with rcctl scale or
rcctl apply.

The container's command is the image's unless one is given: either after
"--", each argument a word of the command exactly as given
(rcctl run q --image busybox -- sh -c 'echo hi; sleep 1000'), or as one
string with --command, split as a shell splits words, quotes included.

With --wait it waits until every replica is ready, printing why it waits
as soon as the manager says it, and fails at once if the controller is
blocked (a replica fits no node).`,
		ValidArgsFunction: cobra.NoFileCompletions, // the ID is a new one
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if o.command != "" {
					return usageErrorf("run: give the command either with --command or after --, not both")
				}
				if len(args) == dash {
					return usageErrorf("run: nothing after --: want COMMAND [ARGS...]")
				}
				args, o.argv = args[:dash], args[dash:]
			}
			if len(args) != 1 {
				return usageErrorf("run: want exactly one ID, got %d", len(args))
			}
			if o.image == "" {
				return usageErrorf("run: --image is required")
			}
			rc, err := buildController(args[0], o)
			if err != nil {
				return usageErrorf("run: %v", err)
			}
			return c.create(cmd.Context(), rc, wait)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.image, "image", "", "the container image (required)")
	fs.StringVar(&o.pull, "image-pull-policy", "", "when each node pulls the image: IfNotPresent (the default), Always or Never")
	fs.IntVar(&o.replicas, "replicas", 1, "the number of replicas to run")
	fs.StringArrayVar(&o.ports, "port", nil, "publish a port, HOST:CONTAINER, IP:HOST:CONTAINER or CONTAINER, with an optional /tcp or /udp (repeatable; a host port needs a manager started with --allow-host-ports)")
	fs.StringArrayVar(&o.env, "env", nil, "set an environment variable, NAME=VALUE (repeatable)")
	fs.StringArrayVar(&o.labels, "label", nil, "a label of the controller, its selector and its tasks, KEY=VALUE (repeatable; default name=ID)")
	wait = addWaitFlags(fs)
	fs.StringVar(&o.command, "command", "", "the container command as one string, split into words as a shell does, with its quotes (default: the image's; or give the command after --)")
	return cmd
}

func (c *cli) create(ctx context.Context, rc *api.ReplicationController, wait waitFlags) error {
	if err := c.validateShape(rc, rc.ID); err != nil {
		return invalid(rc.ID, "", err)
	}
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	if err := c.validate(ctx, cn, rc, rc.ID); err != nil {
		return invalid(rc.ID, "", err)
	}
	rev, err := cn.createController(ctx, rc)
	if errors.Is(err, registry.ErrExists) {
		return fmt.Errorf("controller %q already exists; use rcctl scale or rcctl apply", rc.ID)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "controller %q created\n", rc.ID)
	if !*wait.wait {
		return nil
	}
	return c.waitForController(ctx, cn, rc.ID, rev, *wait.timeout)
}

// buildController makes the 2014-shaped controller run creates. Each map is
// its own copy, so that the spec never aliases one map in three places.
func buildController(id string, o runOptions) (*api.ReplicationController, error) {
	labels := map[string]string{"name": id}
	if len(o.labels) > 0 {
		labels = make(map[string]string, len(o.labels))
		for _, l := range o.labels {
			k, v, ok := strings.Cut(l, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--label %q: want KEY=VALUE", l)
			}
			labels[k] = v
		}
	}
	command, err := containerCommand(o)
	if err != nil {
		return nil, err
	}
	ctr := api.Container{
		Name:            containerName(id),
		Image:           o.image,
		ImagePullPolicy: o.pull,
		Command:         command,
	}
	for _, p := range o.ports {
		port, err := parsePort(p)
		if err != nil {
			return nil, err
		}
		ctr.Ports = append(ctr.Ports, port)
	}
	for _, e := range o.env {
		name, value, ok := strings.Cut(e, "=")
		if !ok || name == "" {
			// Do not echo e: it may hold a secret value.
			return nil, fmt.Errorf("--env: want NAME=VALUE, got a value without a name or without '='")
		}
		ctr.Env = append(ctr.Env, api.EnvVar{Name: name, Value: value})
	}
	return &api.ReplicationController{
		ID:     id,
		Labels: maps.Clone(labels),
		DesiredState: api.ReplicationControllerState{
			Replicas:      o.replicas,
			ReplicasInSet: maps.Clone(labels),
			TaskTemplate: api.TaskTemplate{
				Labels: maps.Clone(labels),
				DesiredState: api.TaskState{Manifest: api.ContainerManifest{
					Version:    "v1beta1",
					Containers: []api.Container{ctr},
				}},
			},
		},
	}, nil
}

// containerCommand is the command after "--" as given, else --command
// split with shell quoting rules; nil (the image's) when neither is given.
func containerCommand(o runOptions) (api.Command, error) {
	if o.argv != nil {
		return api.Command(o.argv), nil
	}
	words, err := shlex.Split(o.command)
	if err != nil {
		return nil, fmt.Errorf("--command %q: %w", o.command, err)
	}
	if len(words) == 0 {
		return nil, nil
	}
	return api.Command(words), nil
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// containerName is the controller ID lowercased when that makes a DNS
// label, and "" (no name) otherwise.
func containerName(id string) string {
	name := strings.ToLower(id)
	if len(name) > 63 || !dnsLabel.MatchString(name) {
		return ""
	}
	return name
}

// parsePort reads CONTAINER, HOST:CONTAINER or IP:HOST:CONTAINER, each
// with an optional /tcp or /udp.
func parsePort(s string) (api.Port, error) {
	spec, proto, hasProto := strings.Cut(s, "/")
	port := api.Port{Protocol: "TCP"}
	if hasProto {
		switch strings.ToLower(proto) {
		case "tcp":
		case "udp":
			port.Protocol = "UDP"
		default:
			return api.Port{}, fmt.Errorf("--port %q: protocol must be tcp or udp", s)
		}
	}
	parts := strings.Split(spec, ":")
	var err error
	switch len(parts) {
	case 1:
		port.ContainerPort, err = portNumber(parts[0])
	case 2:
		if port.HostPort, err = portNumber(parts[0]); err == nil {
			port.ContainerPort, err = portNumber(parts[1])
		}
	case 3:
		port.HostIP = parts[0]
		if port.HostPort, err = portNumber(parts[1]); err == nil {
			port.ContainerPort, err = portNumber(parts[2])
		}
	default:
		err = errors.New("want CONTAINER, HOST:CONTAINER or IP:HOST:CONTAINER")
	}
	if err != nil {
		return api.Port{}, fmt.Errorf("--port %q: %w", s, err)
	}
	return port, nil
}

func portNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	return n, nil
}
