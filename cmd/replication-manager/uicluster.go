package main

// This file is where the status page's nodes view and event feed read
// from: etcd (the nodes' registrations, the assignments, the nodes'
// reports, the gone nodes' records, the nodes' configs and the events of every controller), and, on the leader, its
// scheduler's reservations. Like the rest of the page it only reads.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// clusterView is what the nodes view and the event feed read.
type clusterView interface {
	// Nodes returns what is known of every node.
	Nodes(ctx context.Context) (nodeData, error)
	// Leaderless reports whether the managers take part in the leader
	// election and none holds it; false when etcd cannot say.
	Leaderless(ctx context.Context) bool
	// RecentEvents returns the newest n events over every controller,
	// newest first.
	RecentEvents(ctx context.Context, n int) ([]api.Event, error)
}

// nodeData is the nodes as etcd and the leader know them.
type nodeData struct {
	// registered are the registrations, by name.
	registered []api.Node
	// assigned and containers count each node's slots (assignments) and
	// reported containers, by node name.
	assigned, containers map[string]int
	// ttl is the seconds each registration's lease has left, by node
	// name; absent when etcd did not tell.
	ttl map[string]int64
	// stats are the leader's view of the nodes, with their reservations;
	// nil when this manager does not lead.
	stats []leader.NodeStat
	// gone are the records of the gone nodes, by name.
	gone []api.GoneNode
	// configs are what users said of the nodes (availability, labels),
	// by name.
	configs map[string]api.NodeConfig
}

// clusterSource reads the daemon's etcd once it is connected.
type clusterSource struct {
	state *startup
	// leaderElect: the managers take part in the leader election.
	leaderElect bool
}

func (c clusterSource) Leaderless(ctx context.Context) bool {
	parts, err := c.parts()
	if err != nil || !c.leaderElect {
		return false
	}
	leader, err := parts.store.Leader(ctx)
	return err == nil && leader == ""
}

func (c clusterSource) parts() (*etcdParts, error) {
	parts := c.state.etcd.Load()
	if parts == nil {
		return nil, errStarting
	}
	return parts, nil
}

func (c clusterSource) Nodes(ctx context.Context) (nodeData, error) {
	parts, err := c.parts()
	if err != nil {
		return nodeData{}, err
	}
	d := nodeData{assigned: map[string]int{}, containers: map[string]int{}, ttl: map[string]int64{}}
	if d.registered, err = parts.store.ListNodes(ctx); err != nil {
		return nodeData{}, err
	}
	assignments, err := parts.store.ListAssignments(ctx)
	if err != nil {
		return nodeData{}, err
	}
	for _, slots := range assignments {
		for _, a := range slots {
			d.assigned[a.Node]++
		}
	}
	reports, err := parts.store.ListReports(ctx, "")
	if err != nil {
		return nodeData{}, err
	}
	for _, r := range reports {
		d.containers[r.Node] += len(r.Tasks)
	}
	// a role made before the records existed may not read them: the
	// page goes on without
	if d.gone, err = parts.store.ListGoneNodes(ctx); err != nil && !errors.Is(err, rpctypes.ErrPermissionDenied) {
		return nodeData{}, err
	}
	if d.configs, err = parts.store.ListNodeConfigs(ctx); err != nil && !errors.Is(err, rpctypes.ErrPermissionDenied) {
		return nodeData{}, err
	}
	for _, n := range d.registered {
		id, err := strconv.ParseInt(n.Lease, 16, 64)
		if err != nil || id == 0 {
			continue
		}
		resp, err := parts.client.TimeToLive(ctx, clientv3.LeaseID(id))
		if err != nil {
			break // refused to one, refused to all: shown without
		}
		d.ttl[n.Name] = resp.TTL
	}
	if s := c.state.leaderOfTerm(); s != nil {
		d.stats = s.NodeStats()
	}
	return d, nil
}

func (c clusterSource) RecentEvents(ctx context.Context, n int) ([]api.Event, error) {
	parts, err := c.parts()
	if err != nil {
		return nil, err
	}
	// the events of every controller: the prefix of one, without its id
	prefix := strings.TrimSuffix(parts.store.EventPrefix(""), "/")
	resp, err := parts.client.Get(ctx, prefix, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(int64(n)))
	if err != nil {
		return nil, err
	}
	out := make([]api.Event, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var ev api.Event
		if json.Unmarshal(kv.Value, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out, nil
}
