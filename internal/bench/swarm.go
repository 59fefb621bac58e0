package bench

// This file puts the engine in Swarm mode for the run where it can be
// (docker swarm init on loopback), and takes it out again if the run put
// it in. An engine already in a swarm as a manager is used as it is and
// left in its swarm.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/internal/demospec"
)

// gwBridge is the network Swarm creates on its first init and does not
// remove when the node leaves.
const gwBridge = "docker_gwbridge"

// swarmMode records what setupSwarm changed, for teardown.
type swarmMode struct {
	initialised bool
	// createdBridge is true when docker_gwbridge appeared with our init.
	createdBridge bool
}

// setupSwarm makes the engine a swarm manager if it is not in a swarm. It
// returns why Swarm is not available when it cannot be used; that is not
// an error of the run.
func setupSwarm(ctx context.Context, cli *client.Client) (mode *swarmMode, unavailable string) {
	info, err := cli.Info(ctx)
	if err != nil {
		return nil, fmt.Sprintf("not available: docker info: %v", err)
	}
	switch info.Swarm.LocalNodeState {
	case swarm.LocalNodeStateActive:
		if !info.Swarm.ControlAvailable {
			return nil, "not available: this engine is a swarm worker, not a manager"
		}
		return &swarmMode{}, ""
	case swarm.LocalNodeStateInactive:
	default:
		return nil, fmt.Sprintf("not available: the engine's swarm state is %q", info.Swarm.LocalNodeState)
	}
	nets, err := cli.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("name", gwBridge))})
	if err != nil {
		return nil, "not available: list networks: " + err.Error()
	}
	bridgeExisted := slices.ContainsFunc(nets, func(n network.Summary) bool { return n.Name == gwBridge })
	if _, err := cli.SwarmInit(ctx, swarm.InitRequest{ListenAddr: "127.0.0.1:2377", AdvertiseAddr: "127.0.0.1"}); err != nil {
		return nil, fmt.Sprintf("not available: docker swarm init --advertise-addr 127.0.0.1: %v", err)
	}
	return &swarmMode{initialised: true, createdBridge: !bridgeExisted}, ""
}

// teardown removes the run's services and, if the run initialised the
// swarm, leaves it and removes the bridge network the init made.
func (m *swarmMode) teardown(ctx context.Context, cli *client.Client, runID string) error {
	services, err := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", runLabel+"="+runID))})
	if err != nil {
		return fmt.Errorf("list services: %w", err)
	}
	var errs []error
	for _, s := range services {
		if err := cli.ServiceRemove(ctx, s.ID); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove service %s: %w", s.Spec.Name, err))
		}
	}
	if !m.initialised {
		return errors.Join(errs...)
	}
	if err := cli.SwarmLeave(ctx, true); err != nil {
		errs = append(errs, fmt.Errorf("docker swarm leave: %w", err))
	} else if m.createdBridge {
		if err := cli.NetworkRemove(ctx, gwBridge); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", gwBridge, err))
		}
	}
	return errors.Join(errs...)
}

// createService is `docker service create --no-resolve-image --replicas n`
// of the image, running the same command as the other systems.
func createService(ctx context.Context, cli *client.Client, name, img string, n int, labels map[string]string) (string, error) {
	replicas := uint64(n)
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{Image: img, Args: demospec.Command, Labels: labels},
		},
		Mode: swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
	}
	// QueryRegistry false is --no-resolve-image: there is no registry.
	resp, err := cli.ServiceCreate(ctx, spec, swarm.ServiceCreateOptions{QueryRegistry: false})
	if err != nil {
		return "", fmt.Errorf("service create %s: %w", name, err)
	}
	return resp.ID, nil
}
