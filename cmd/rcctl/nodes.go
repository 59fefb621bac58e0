package main

// nodes lists the nodes of docs/CONTRACT.md, Nodes: every Docker engine a
// manager acts for. The acting manager registers its node under
// /registry/nodes/<name> with its etcd session lease, so the key exists
// only while the node is alive. A node that is no longer registered but
// still holds assignments (/registry/assignments/<id>/<slot>) is listed
// too, as NotReady: its lease is gone, and the leader moves its slots to
// live nodes after --node-grace. The container counts come from the
// nodes' reports (/registry/reports/<id>/<node>), and what the slots
// reserve from the specs and the assignments.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// nodesOutputFormats are the values of nodes -o.
var nodesOutputFormats = []string{outputWide, outputJSON, outputYAML, outputName, outputJSONPath}

// The STATUS of a node.
const (
	nodeReady    = "Ready"
	nodeNotReady = "NotReady"
)

func (c *cli) nodesCommand() *cobra.Command {
	var outputFlag string
	cmd := &cobra.Command{
		Use:   "nodes [-o wide|json|yaml|name|jsonpath=TEMPLATE]",
		Short: "list the nodes (Docker engines), their leases and containers",
		Long: `Nodes lists the Docker engines the managers act for, one row per node.

STATUS is Ready for a registered node: the acting manager keeps its key alive
under its etcd lease. A node whose lease is gone is Gone, with how long ago it
went: the leader moves its slots to live nodes after --node-grace, and keeps a
record of the containers the node last reported, which may still run there (a
node cut off from etcd keeps its containers); they are listed below the table.
The leader forgets a gone node a day after it went once nothing is assigned to
it, or when it registers again; rcctl nodes forget NODE forgets it now. A node
that is not registered, has no such record and still holds assignments is
NotReady. CONTAINERS counts the containers the node
reports running, over every controller; ASSIGNED counts the slots the leader
assigned to it. FREE-CPU (in cores) and FREE-MEMORY are what placement may
still hand out there: the node's capacity less what its host keeps for itself
(the manager's --node-reserve) and less what the slots assigned to it reserve
(the memory and cpu of their task, summed over those slots). LEASE is the etcd
lease of the registration, in hex, with the seconds it has left when etcd
tells them. -o wide adds the engine's id; the capacity (CPUS, MEMORY); what
the host reserves (HOST-CPU, HOST-MEMORY) and what the slots reserve
(SLOTS-CPU, SLOTS-MEMORY); and the manager acting for the node.

-o json prints {"items": [...]}, one item per node, in name order: the
registration as the manager wrote it (name, labels, capacity {cpus, memory},
reserved {cpus, memory} when the host keeps some, engineID, manager, lease,
registeredAt; only the name for a Gone or NotReady node), and "status":
{"state": "Ready"|"Gone"|"NotReady", "gone": {"since", "lastContainers":
[{controller, slot, name, image, state}]} (a Gone node's), "containers": N, "assigned": N, "leaseTTLSeconds": N,
"resources": {"capacity", "reservedByHost", "reservedBySlots", "free"}},
leaseTTLSeconds only when etcd told it; each resource is {"cpu": cores,
"memory": bytes}, a NotReady node has only reservedBySlots, and free needs
both the CPUs and the memory registered. -o yaml prints
the same as YAML, -o jsonpath=TEMPLATE through a kubectl JSONPath template
(-o jsonpath='{.items[*].name}'), and -o name prints node/NAME per node.`,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := parseOutput("nodes", outputFlag, nodesOutputFormats)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return usageErrorf("nodes: takes no arguments, got %d", len(args))
			}
			return c.nodes(cmd.Context(), out)
		},
	}
	addOutputFlag(cmd, &outputFlag, nodesOutputFormats)
	cmd.AddCommand(c.nodesForgetCommand())
	return cmd
}

// nodeView is one node as nodes shows it.
type nodeView struct {
	name string
	// node is the registration; nil for a node that is not registered.
	node *api.Node
	// gone is the record of a node whose lease is gone (nodesgone.go).
	gone *api.GoneNode
	// config is what the user said of the node (/registry/nodeconfig).
	config     api.NodeConfig
	containers int
	assigned   int
	// slots is what the slots assigned to the node reserve.
	slots api.Resources
	// ttl is the seconds the lease has left (-1: gone), when ttlKnown.
	ttl      int64
	ttlKnown bool
}

func (v *nodeView) state() string {
	switch {
	case v.node != nil:
		return nodeReady
	case v.gone != nil:
		return api.NodeGone
	}
	return nodeNotReady
}

func (c *cli) nodes(ctx context.Context, out output) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	leader := c.warnLeaderless(ctx, cn)
	views, err := c.readNodes(ctx, cn)
	if err != nil {
		return err
	}
	switch {
	case out.document():
		return c.printNodesDocument(views, leader, out)
	case out.format == outputName:
		for _, v := range views {
			fmt.Fprintln(c.stdout, "node/"+v.name)
		}
		return nil
	}
	if len(views) == 0 {
		fmt.Fprintln(c.stderr, "No nodes found.")
		return nil
	}
	c.printNodes(c.stdout, views, leader, out.format == outputWide)
	c.printGoneContainers(c.stdout, views)
	return nil
}

// readNodes joins the registrations, the assignments and the reports by
// node name, in name order, and asks etcd for each registration lease's
// remaining time.
func (c *cli) readNodes(ctx context.Context, cn *conn) ([]*nodeView, error) {
	nodes, err := cn.listNodes(ctx)
	if err != nil {
		return nil, err
	}
	assignments, err := cn.listAssignments(ctx)
	if err != nil {
		return nil, err
	}
	reports, err := cn.listReports(ctx, "")
	if err != nil {
		return nil, err
	}
	specs, err := cn.listControllers(ctx)
	if err != nil {
		return nil, err
	}
	gone, err := readGoneNodes(ctx, cn)
	if err != nil {
		return nil, err
	}
	configs, err := readNodeConfigs(ctx, cn)
	if err != nil {
		return nil, err
	}
	byName := map[string]*nodeView{}
	get := func(name string) *nodeView {
		v := byName[name]
		if v == nil {
			v = &nodeView{name: name}
			byName[name] = v
		}
		return v
	}
	for i := range nodes {
		get(nodes[i].Name).node = &nodes[i]
	}
	for i := range gone {
		if v := get(gone[i].Name); v.node == nil {
			v.gone = &gone[i]
		}
	}
	for _, slots := range assignments {
		for _, a := range slots {
			get(a.Node).assigned++
		}
	}
	for _, r := range reports {
		if r.Node != "" {
			get(r.Node).containers += len(r.Tasks)
		}
	}
	for name, r := range slotReservations(specs, assignments) {
		get(name).slots = r
	}
	for name, cfg := range configs {
		if v := byName[name]; v != nil {
			v.config = cfg
		}
	}
	views := make([]*nodeView, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		views = append(views, byName[name])
	}
	c.readLeaseTTLs(ctx, cn, views)
	return views, nil
}

// readLeaseTTLs fills in the remaining time of each registration's lease.
// etcd may refuse to tell (a role that cannot read every key of the
// lease): the lease is then shown without it, and the others are not
// asked for, since they would be refused the same way.
func (c *cli) readLeaseTTLs(ctx context.Context, cn *conn, views []*nodeView) {
	for _, v := range views {
		if v.node == nil {
			continue
		}
		id, ok := parseLease(v.node.Lease)
		if !ok {
			continue
		}
		ttl, err := c.leaseTTL(ctx, cn, id)
		if err != nil {
			return
		}
		v.ttl, v.ttlKnown = ttl, true
	}
}

// parseLease reads a lease id as the manager writes it: hex, as etcdctl
// prints it.
func parseLease(s string) (clientv3.LeaseID, bool) {
	if s == "" {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 16, 64)
	if err != nil || id == 0 {
		return 0, false
	}
	return clientv3.LeaseID(id), true
}

// lease is the LEASE cell: the id, and its remaining time when known.
func (v *nodeView) lease() string {
	if v.node == nil || v.node.Lease == "" {
		return ctlview.None
	}
	switch {
	case !v.ttlKnown:
		return v.node.Lease
	case v.ttl < 0:
		return v.node.Lease + " (expired)"
	}
	return fmt.Sprintf("%s (%ds)", v.node.Lease, v.ttl)
}

func (c *cli) printNodes(w io.Writer, views []*nodeView, leader leading, wide bool) {
	tw := newTable(w)
	header := []string{"NAME", "STATUS", "LABELS", "CONTAINERS", "ASSIGNED", "FREE-CPU", "FREE-MEMORY", "LEASE", "AGE"}
	if wide {
		header = append(header, "ENGINE", "CPUS", "MEMORY", "HOST-CPU", "HOST-MEMORY", "SLOTS-CPU", "SLOTS-MEMORY", "MANAGER")
	}
	row(tw, header...)
	now := c.now()
	for _, v := range views {
		labels, age := ctlview.Unknown, ctlview.Unknown
		engine, manager := ctlview.Unknown, ctlview.Unknown
		if n := v.node; n != nil {
			labels = v.labelsCell()
			age = ctlview.Age(now, n.RegisteredAt)
			engine = ctlview.OrNone(n.EngineID)
			manager = ctlview.OrNone(n.Manager)
			if leader.leads(n) {
				manager += " (leader)"
			}
		}
		free, resources := v.resourceCells()
		cells := append([]string{v.name, v.statusCell(c), labels, strconv.Itoa(v.containers), strconv.Itoa(v.assigned)}, free...)
		cells = append(cells, v.lease(), age)
		if wide {
			cells = append(append(append(cells, engine), resources...), manager)
		}
		row(tw, cells...)
	}
	_ = tw.Flush()
}

// nodeItem is one node of nodes -o json: the registration's fields (none
// but the name for a node that is not registered) and its status.
type nodeItem struct {
	// Name hides the registration's, so that a node without one has it.
	Name string `json:"name"`
	*api.Node
	Status nodeItemStatus `json:"status"`
}

type nodeItemStatus struct {
	State      string `json:"state"`
	Containers int    `json:"containers"`
	Assigned   int    `json:"assigned"`
	// Resources are the node's capacity, what is reserved there and what
	// is free.
	Resources nodeItemResources `json:"resources"`
	// LeaseTTLSeconds is what the lease has left, when etcd told it (-1:
	// the lease is gone).
	LeaseTTLSeconds *int64 `json:"leaseTTLSeconds,omitempty"`
	// Availability is the node's config's: active, pause or drain.
	Availability api.NodeAvailability `json:"availability"`
	// Leader: the node's manager leads the registry (holds the leader
	// election).
	Leader bool `json:"leader,omitempty"`
	// Labels are the labels placement sees (the config's over the
	// registered ones), and LabelSources where each comes from: "flag"
	// (--node-labels) or "key" (/registry/nodeconfig).
	Labels       map[string]string `json:"labels,omitempty"`
	LabelSources map[string]string `json:"labelSources,omitempty"`
	// Gone is a gone node's record: when it went, and the containers it
	// last reported, which may still run there.
	Gone *nodeItemGone `json:"gone,omitempty"`
}

type nodeItemGone struct {
	Since          time.Time           `json:"since"`
	LastContainers []api.GoneContainer `json:"lastContainers"`
	Omitted        int                 `json:"omitted,omitempty"`
}

// printNodesDocument prints {"items": [...]} in the document format.
func (c *cli) printNodesDocument(views []*nodeView, leader leading, out output) error {
	items := make([]nodeItem, 0, len(views))
	for _, v := range views {
		item := nodeItem{Name: v.name, Node: v.node, Status: nodeItemStatus{State: v.state(),
			Containers: v.containers, Assigned: v.assigned, Resources: v.resources(), Leader: leader.leads(v.node)}}
		if v.ttlKnown {
			item.Status.LeaseTTLSeconds = &v.ttl
		}
		item.Status.Availability = v.config.Effective()
		item.Status.Labels, item.Status.LabelSources = v.labels()
		if v.node == nil && v.gone != nil {
			item.Status.Gone = &nodeItemGone{Since: v.gone.GoneSince, LastContainers: v.gone.Containers, Omitted: v.gone.Omitted}
			if item.Status.Gone.LastContainers == nil {
				item.Status.Gone.LastContainers = []api.GoneContainer{}
			}
		}
		items = append(items, item)
	}
	data, err := ctlview.EncodeJSON(struct {
		Items []nodeItem `json:"items"`
	}{items})
	if err != nil {
		return err
	}
	return out.writeDocument(c.stdout, data)
}

// nodeCounts is how many containers of each controller each node reports:
// controller id → node → containers.
func nodeCounts(reports []api.NodeReport) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range reports {
		id := r.Status.ID
		if out[id] == nil {
			out[id] = map[string]int{}
		}
		out[id][r.Node] += len(r.Tasks)
	}
	return out
}

// pullingCounts counts, per controller and node, the slots waiting for
// their image's pull; controllers with none are left out.
func pullingCounts(reports []api.NodeReport) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range reports {
		if len(r.Pulling) == 0 {
			continue
		}
		id := r.Status.ID
		if out[id] == nil {
			out[id] = map[string]int{}
		}
		out[id][r.Node] += len(r.Pulling)
	}
	return out
}

// formatNodeCounts prints a controller's containers per node, as "a:2,b:1"
// in node order, or <none> when no node reports on it.
func formatNodeCounts(counts map[string]int) string {
	if len(counts) == 0 {
		return ctlview.None
	}
	pairs := make([]string, 0, len(counts))
	for _, node := range slices.Sorted(maps.Keys(counts)) {
		pairs = append(pairs, node+":"+strconv.Itoa(counts[node]))
	}
	return strings.Join(pairs, ",")
}

// readReports reads the nodes' reports on controller id ("" for every
// controller), for the commands that show them beside what they are
// about. An etcd role that may not read them (one made before there were
// nodes) gets a warning and ok false, and the command goes on without
// them; any other error is returned.
func (c *cli) readReports(ctx context.Context, cn *conn, id string) (reports []api.NodeReport, ok bool, err error) {
	reports, err = cn.listReports(ctx, id)
	if errors.Is(err, rpctypes.ErrPermissionDenied) {
		fmt.Fprintf(c.stderr, "warning: the nodes' reports cannot be read, so the nodes of the containers are not shown: %s\n", oneLine(err))
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return reports, true, nil
}
