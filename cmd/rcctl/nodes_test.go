package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/certtest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// grantLease grants a lease that lives ttl unless revoked, as a node's
// session lease does.
func (e *testEnv) grantLease(ttl time.Duration) clientv3.LeaseID {
	e.t.Helper()
	lease, err := e.store.GrantLease(context.Background(), ttl)
	if err != nil {
		e.t.Fatal(err)
	}
	return lease
}

// registerNode registers n under lease as its acting manager does: the
// lease in hex in the registration.
func (e *testEnv) registerNode(n api.Node, lease clientv3.LeaseID) {
	e.t.Helper()
	n.Lease = fmt.Sprintf("%x", int64(lease))
	if err := e.store.RegisterNode(context.Background(), &n, lease); err != nil {
		e.t.Fatal(err)
	}
}

// assign writes the assignment of a slot to node, as the leader does.
func (e *testEnv) assign(id string, slot int, node string) {
	e.t.Helper()
	if _, err := e.client.Put(context.Background(), e.store.AssignmentKey(id, slot), node); err != nil {
		e.t.Fatal(err)
	}
}

// report writes node's report on controller id, listing tasks, under
// lease, as the node does.
func (e *testEnv) report(lease clientv3.LeaseID, node, id string, tasks ...api.ReportedTask) {
	e.t.Helper()
	r := &api.NodeReport{Node: node, Status: api.ReplicationControllerStatus{ID: id, Replicas: len(tasks)}, Tasks: tasks}
	if err := e.store.PutReport(context.Background(), r, lease, nil); err != nil {
		e.t.Fatal(err)
	}
}

// reported is a reported container of a controller's slot.
func reported(id string, slot int, created time.Time) api.ReportedTask {
	return api.ReportedTask{Name: id + "-" + strconv.Itoa(slot), ID: fmt.Sprintf("%s-%d-id", id, slot), Slot: slot,
		Image: "demo-task:latest", ImageID: taskcontrol.FakeImageID("demo-task:latest"), State: api.StateRunning, Created: created}
}

// demoImageID is the short ID of the image demo-task:latest names in the
// fake Docker, and in reported.
var demoImageID = api.ShortImageID(taskcontrol.FakeImageID("demo-task:latest"))

// hexLease is a lease as the registrations and the LEASE column show it.
func hexLease(lease clientv3.LeaseID) string { return fmt.Sprintf("%x", int64(lease)) }

// cellSep is what separates two cells of a table: the tabwriter pads
// with at least three spaces, and no cell holds more than one in a row.
var cellSep = regexp.MustCompile(` {3,}`)

// tableRows splits a table into its rows' cells, header first.
func tableRows(out string) [][]string {
	var rows [][]string
	for line := range strings.Lines(out) {
		rows = append(rows, cellSep.Split(strings.TrimSpace(line), -1))
	}
	return rows
}

func assertRows(t *testing.T, out string, want [][]string) {
	t.Helper()
	got := tableRows(out)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("table:\n%s\nrows %q\nwant %q", out, got, want)
	}
}

// twoNodesAndAGoneOne registers a (two web containers and one of api) and
// b (one of web), and leaves c, whose lease is gone, with an assignment.
func twoNodesAndAGoneOne(t *testing.T, e *testEnv) (leaseA, leaseB clientv3.LeaseID) {
	t.Helper()
	leaseA, leaseB = e.grantLease(time.Hour), e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "a", Labels: map[string]string{"zone": "east", "disk": "ssd"}, Capacity: api.NodeCapacity{CPUs: 4, Memory: 8 << 30},
		EngineID: "ENGINE-A", Manager: "host-a/1234", RegisteredAt: e.now.Add(-5 * time.Minute)}, leaseA)
	e.registerNode(api.Node{Name: "b", EngineID: "ENGINE-B", RegisteredAt: e.now.Add(-3 * time.Hour)}, leaseB)
	e.assign("web", 1, "a")
	e.assign("web", 2, "b")
	e.assign("web", 3, "a")
	e.assign("web", 4, "c")
	e.assign("api", 1, "a")
	e.report(leaseA, "a", "web", reported("web", 1, e.now), reported("web", 3, e.now))
	e.report(leaseA, "a", "api", reported("api", 1, e.now))
	e.report(leaseB, "b", "web", reported("web", 2, e.now))
	return leaseA, leaseB
}

// runWithTTL is runCLI with etcd's answer on every lease's TTL replaced.
func (e *testEnv) runWithTTL(ttl func(clientv3.LeaseID) (int64, error), args ...string) result {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	c := e.cli(&stdout, &stderr)
	c.leaseTTL = func(_ context.Context, _ *conn, lease clientv3.LeaseID) (int64, error) { return ttl(lease) }
	err := c.run(context.Background(), e.args(args))
	return result{stdout.String(), stderr.String(), err}
}

func TestNodesListsEachNodeWithItsContainersAssignmentsAndLease(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leaseA, leaseB := twoNodesAndAGoneOne(t, e)

	r := e.runWithTTL(func(clientv3.LeaseID) (int64, error) { return 12, nil }, "nodes")

	assertOK(t, r)
	if header := strings.SplitN(r.stdout, "\n", 2)[0]; !strings.HasPrefix(header, "NAME   STATUS     LABELS               CONTAINERS   ASSIGNED   FREE-CPU    FREE-MEMORY   LEASE") {
		t.Errorf("header %q", header)
	}
	assertRows(t, r.stdout, [][]string{
		{"NAME", "STATUS", "LABELS", "CONTAINERS", "ASSIGNED", "FREE-CPU", "FREE-MEMORY", "LEASE", "AGE"},
		{"a", "Ready", "disk=ssd,zone=east", "3", "3", "4", "8GiB", hexLease(leaseA) + " (12s)", "5m"},
		{"b", "Ready", "<none>", "1", "1", "<unknown>", "<unknown>", hexLease(leaseB) + " (12s)", "3h"},
		{"c", "NotReady", "<unknown>", "0", "1", "<unknown>", "<unknown>", "<none>", "<unknown>"},
	})
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing", r.stderr)
	}
}

func TestNodesWideAddsEngineCPUsMemoryAndManager(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leaseA, leaseB := twoNodesAndAGoneOne(t, e)

	r := e.runWithTTL(func(clientv3.LeaseID) (int64, error) { return 7, nil }, "nodes", "-o", "wide")

	assertOK(t, r)
	assertRows(t, r.stdout, [][]string{
		{"NAME", "STATUS", "LABELS", "CONTAINERS", "ASSIGNED", "FREE-CPU", "FREE-MEMORY", "LEASE", "AGE",
			"ENGINE", "CPUS", "MEMORY", "HOST-CPU", "HOST-MEMORY", "SLOTS-CPU", "SLOTS-MEMORY", "MANAGER"},
		{"a", "Ready", "disk=ssd,zone=east", "3", "3", "4", "8GiB", hexLease(leaseA) + " (7s)", "5m",
			"ENGINE-A", "4", "8GiB", "0", "0B", "0", "0B", "host-a/1234"},
		{"b", "Ready", "<none>", "1", "1", "<unknown>", "<unknown>", hexLease(leaseB) + " (7s)", "3h",
			"ENGINE-B", "<unknown>", "<unknown>", "0", "0B", "0", "0B", "<none>"},
		{"c", "NotReady", "<unknown>", "0", "1", "<unknown>", "<unknown>", "<none>", "<unknown>",
			"<unknown>", "<unknown>", "<unknown>", "<unknown>", "<unknown>", "0", "0B", "<unknown>"},
	})
}

func TestNodesShowsWhatTheLeaseHasLeftAsEtcdTellsIt(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lease := e.grantLease(time.Minute)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, lease)

	r := e.runCLI("nodes")

	assertOK(t, r)
	rows := tableRows(r.stdout)
	if len(rows) != 2 || len(rows[1]) != 9 {
		t.Fatalf("rows %q, want the header and one node", rows)
	}
	m := regexp.MustCompile(`^` + hexLease(lease) + ` \((\d+)s\)$`).FindStringSubmatch(rows[1][7])
	if m == nil {
		t.Fatalf("LEASE %q, want %s (<seconds>s)", rows[1][7], hexLease(lease))
	}
	if ttl, _ := strconv.Atoi(m[1]); ttl < 30 || ttl > 60 {
		t.Errorf("TTL %ds, want what is left of 60s", ttl)
	}
}

func TestNodesShowsTheLeaseAloneWhenEtcdWillNotTellWhatIsLeft(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leaseA, leaseB := twoNodesAndAGoneOne(t, e)
	var asked atomic.Int32

	r := e.runWithTTL(func(clientv3.LeaseID) (int64, error) {
		asked.Add(1)
		return 0, rpctypes.ErrPermissionDenied
	}, "nodes")

	assertOK(t, r)
	assertRows(t, r.stdout, [][]string{
		{"NAME", "STATUS", "LABELS", "CONTAINERS", "ASSIGNED", "FREE-CPU", "FREE-MEMORY", "LEASE", "AGE"},
		{"a", "Ready", "disk=ssd,zone=east", "3", "3", "4", "8GiB", hexLease(leaseA), "5m"},
		{"b", "Ready", "<none>", "1", "1", "<unknown>", "<unknown>", hexLease(leaseB), "3h"},
		{"c", "NotReady", "<unknown>", "0", "1", "<unknown>", "<unknown>", "<none>", "<unknown>"},
	})
	if n := asked.Load(); n != 1 {
		t.Errorf("asked etcd %d times, want once: a refusal is not asked again", n)
	}
}

func TestNodesShowsAnExpiredLease(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leaseA, _ := twoNodesAndAGoneOne(t, e)

	r := e.runWithTTL(func(lease clientv3.LeaseID) (int64, error) {
		if lease == leaseA {
			return -1, nil
		}
		return 30, nil
	}, "nodes")

	assertOK(t, r)
	assertContains(t, r.stdout, hexLease(leaseA)+" (expired)")
}

func TestNodesShowsANodeWhoseLeaseRanOutAsNotReady(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lease := e.grantLease(time.Second)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, lease)
	e.assign("web", 1, "a")
	e.report(lease, "a", "web", reported("web", 1, e.now))
	r := e.runCLI("nodes")
	assertOK(t, r)
	if rows := tableRows(r.stdout); len(rows) != 2 || rows[1][1] != "Ready" || rows[1][3] != "1" {
		t.Fatalf("before the lease runs out: rows %q, want a Ready with 1 container", rows)
	}

	// nobody keeps the lease alive: etcd lets it go, with the
	// registration and the report; the leader's assignment stays
	testpoll.Eventually(t, 15*time.Second, func() error {
		r := e.runCLI("nodes")
		if r.err != nil {
			return r.err
		}
		want := [][]string{
			{"NAME", "STATUS", "LABELS", "CONTAINERS", "ASSIGNED", "FREE-CPU", "FREE-MEMORY", "LEASE", "AGE"},
			{"a", "NotReady", "<unknown>", "0", "1", "<unknown>", "<unknown>", "<none>", "<unknown>"},
		}
		if got := tableRows(r.stdout); !slices.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("rows %q, want %q", got, want)
		}
		return nil
	})
}

func TestNodesJSON(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leaseA, _ := twoNodesAndAGoneOne(t, e)

	r := e.runWithTTL(func(lease clientv3.LeaseID) (int64, error) {
		if lease == leaseA {
			return 12, nil
		}
		return 0, rpctypes.ErrPermissionDenied
	}, "nodes", "-o", "json")

	assertOK(t, r)
	var raw struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("decode %q: %v", r.stdout, err)
	}
	var list struct {
		Items []struct {
			api.Node
			Status nodeItemStatus `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("decode %q: %v", r.stdout, err)
	}
	if len(list.Items) != 3 {
		t.Fatalf("items %+v, want a, b and c", list.Items)
	}
	a, b, c := list.Items[0], list.Items[1], list.Items[2]
	if a.Name != "a" || a.Labels["zone"] != "east" || a.Capacity.CPUs != 4 || a.Capacity.Memory != 8<<30 || a.EngineID != "ENGINE-A" ||
		a.Manager != "host-a/1234" || a.Lease != hexLease(leaseA) || !a.RegisteredAt.Equal(e.now.Add(-5*time.Minute)) {
		t.Errorf("a: %+v", a.Node)
	}
	if got, want := a.Status, (nodeItemStatus{State: "Ready", Containers: 3, Assigned: 3}); got.State != want.State ||
		got.Containers != want.Containers || got.Assigned != want.Assigned || got.LeaseTTLSeconds == nil || *got.LeaseTTLSeconds != 12 {
		t.Errorf("a: status %+v, want %+v and a TTL of 12", got, want)
	}
	if b.Name != "b" || b.Status.State != "Ready" || b.Status.LeaseTTLSeconds != nil {
		t.Errorf("b: %+v, want Ready without a TTL (etcd refused it)", b)
	}
	if c.Name != "c" || c.Status.State != "NotReady" || c.Status.Assigned != 1 || c.Status.Containers != 0 || c.Status.Availability != api.NodeActive {
		t.Errorf("c: %+v, want NotReady with 1 assigned", c)
	}
	for _, key := range []string{"engineID", "capacity", "registeredAt", "lease"} {
		if _, ok := raw.Items[2][key]; ok {
			t.Errorf("c, which is not registered, has %q: %v", key, raw.Items[2])
		}
	}
}

func TestNodesWithNoNodesSaysSoOnStderr(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "nodes")

	assertStdout(t, r, "")
	if r.stderr != "No nodes found.\n" {
		t.Errorf("stderr %q, want %q", r.stderr, "No nodes found.\n")
	}
	assertStdout(t, e.run("", "nodes", "-o", "json"), "{\n  \"items\": []\n}\n")
}

func TestNodesUsageMistakesExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"nodes", "-o", "xml"}, {"nodes", "-o", "jsonpath"}, {"nodes", "-o", "jsonpath={.items["}, {"nodes", "-o", "json=x"}, {"nodes", "a"}, {"nodes", "--bogus"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runOffline(t, args...)
			if r.err == nil || exitCode(r.err) != 2 {
				t.Errorf("error %v, want a usage error", r.err)
			}
		})
	}
}

func TestCompletionOfNodesOffersItsOutputFormats(t *testing.T) {
	t.Parallel()
	words, directive := complete(t, "nodes", "-o", "")
	if want := []string{"wide", "json", "yaml", "name", "jsonpath="}; !slices.Equal(words, want) || directive != noFileComp {
		t.Errorf("nodes -o offers %q, %q; want %q, %q", words, directive, want, noFileComp)
	}
	if words, directive := complete(t, "nodes", ""); len(words) != 1 || !strings.HasPrefix(words[0], "forget\t") || directive != noFileComp {
		t.Errorf("nodes offers %q, %q; want its subcommand forget, %q", words, directive, noFileComp)
	}
}

// TestARoleThatCannotReadTheReportsStillGetsAndDescribes: a user whose
// etcd role predates the nodes (read on the specs, status, events,
// history and meta, nothing else) gets the rest of get -o wide and
// describe, with the nodes shown as unknown and a warning; rcctl nodes,
// which is nothing but those keys, fails with etcd's refusal explained.
func TestARoleThatCannotReadTheReportsStillGetsAndDescribes(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	tlsURL := url.URL{Scheme: "https", Host: etcdtest.FreeAddr(t)}
	srv := startEtcd(t, func(cfg *embed.Config) {
		cfg.ListenClientUrls = append(cfg.ListenClientUrls, tlsURL)
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: certs.ServerCertFile, KeyFile: certs.ServerKeyFile}
	})
	client := srv.Client(t)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	e := &testEnv{t: t, etcd: srv, client: client, store: registry.NewStore(client, registry.DefaultPrefix),
		docker: &taskcontrol.Fake{Now: func() time.Time { return now }}, now: now}
	withStatus(t, e)
	web1 := addTask(t, e, 1, api.StateRunning, e.now.Add(-time.Hour))
	lease := e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "node-a", RegisteredAt: e.now}, lease)
	e.report(lease, "node-a", "web", api.ReportedTask{Name: "web-1", ID: web1, Slot: 1, State: api.StateRunning})

	ctx := t.Context()
	steps := []func() error{
		func() error { _, err := client.RoleAdd(ctx, "root"); return err },
		func() error { _, err := client.UserAdd(ctx, "root", "root-pw-5e1"); return err },
		func() error { _, err := client.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := client.RoleAdd(ctx, "viewer"); return err },
		func() error { _, err := client.UserAdd(ctx, "viewer", "viewer-pw-5e1"); return err },
		func() error { _, err := client.UserGrantRole(ctx, "viewer", "viewer"); return err },
	}
	for _, prefix := range []string{"/registry/controllers/", "/registry/status/", "/registry/events/", "/registry/history/", "/registry/meta/"} {
		steps = append(steps, func() error {
			_, err := client.RoleGrantPermission(ctx, "viewer", prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermRead))
			return err
		})
	}
	steps = append(steps, func() error { _, err := client.AuthEnable(ctx); return err })
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("set up etcd auth: %v", err)
		}
	}
	viewer := func(args ...string) result {
		var stdout, stderr bytes.Buffer
		c := e.cli(&stdout, &stderr)
		err := c.run(ctx, append([]string{"--etcd-servers", tlsURL.String(), "--etcd-cafile", certs.CAFile,
			"--etcd-user", "viewer", "--etcd-password", "viewer-pw-5e1"}, args...))
		return result{stdout.String(), stderr.String(), err}
	}

	r := viewer("get", "web", "-o", "wide")
	assertOK(t, r)
	if rows := tableRows(r.stdout); len(rows) != 2 || rows[0][12] != "NODES" || rows[1][12] != "<unknown>" || rows[1][11] != "ReplicaFailure" {
		t.Errorf("rows %q, want web with NODES <unknown>", rows)
	}
	assertContains(t, r.stderr, "warning: the nodes' reports cannot be read", "permission denied")

	r = viewer("describe", "web")
	assertOK(t, r)
	assertContains(t, r.stdout, ""+
		"  NAME    NODE        SLOT   STATE     HEALTH   CREATED   IMAGE-ID\n"+
		"  web-1   <unknown>   1      running   <none>   60m ago   "+demoImageID+"\n")
	assertContains(t, r.stderr, "warning: the nodes' reports cannot be read")

	assertFails(t, viewer("nodes"), "permission denied", `etcd user "viewer" lacks a permission it needs`)
}

// reservingNodes registers a (4 CPUs, 8GiB, of which its host keeps 0.5
// and 1GiB) and b (2 CPUs, 2GiB, of which 1.5 and 1GiB), with web's tasks
// asking 1 CPU and 1GiB and api's 0.25 and 512MiB: web 1 and 2 and api 1
// on a, web 3 on b, web 4 on c (gone), and a slot of a controller without
// a spec on a, which reserves nothing.
func reservingNodes(t *testing.T, e *testEnv) {
	t.Helper()
	web, api1 := newController("web", 4), newController("api", 1)
	web.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Memory = 1 << 30
	web.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].CPU = 1024
	api1.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Memory = 512 << 20
	api1.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].CPU = 256
	e.create(web)
	e.create(api1)
	e.registerNode(api.Node{Name: "a", Capacity: api.NodeCapacity{CPUs: 4, Memory: 8 << 30},
		Reserved: api.NodeReserved{CPUs: 0.5, Memory: 1 << 30}, EngineID: "ENGINE-A", RegisteredAt: e.now}, e.grantLease(time.Hour))
	e.registerNode(api.Node{Name: "b", Capacity: api.NodeCapacity{CPUs: 2, Memory: 2 << 30},
		Reserved: api.NodeReserved{CPUs: 1.5, Memory: 1 << 30}, EngineID: "ENGINE-B", RegisteredAt: e.now}, e.grantLease(time.Hour))
	e.assign("web", 1, "a")
	e.assign("web", 2, "a")
	e.assign("api", 1, "a")
	e.assign("gone", 1, "a")
	e.assign("web", 3, "b")
	e.assign("web", 4, "c")
}

func TestNodesShowsCapacityWhatTheHostAndTheSlotsReserveAndWhatIsFree(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	reservingNodes(t, e)

	r := e.runWithTTL(func(clientv3.LeaseID) (int64, error) { return 0, rpctypes.ErrPermissionDenied }, "nodes", "-o", "wide")

	assertOK(t, r)
	rows := tableRows(r.stdout)
	if len(rows) != 4 {
		t.Fatalf("table:\n%s\nwant a, b and c", r.stdout)
	}
	pick := func(row []string) []string { // NAME, FREE-*, then CPUS through SLOTS-MEMORY
		return append(append([]string{row[0]}, row[5:7]...), row[10:16]...)
	}
	want := [][]string{
		{"NAME", "FREE-CPU", "FREE-MEMORY", "CPUS", "MEMORY", "HOST-CPU", "HOST-MEMORY", "SLOTS-CPU", "SLOTS-MEMORY"},
		{"a", "1.25", "4.5GiB", "4", "8GiB", "0.5", "1GiB", "2.25", "2.5GiB"},
		{"b", "-0.5", "0B", "2", "2GiB", "1.5", "1GiB", "1", "1GiB"},
		{"c", "<unknown>", "<unknown>", "<unknown>", "<unknown>", "<unknown>", "<unknown>", "1", "1GiB"},
	}
	for i, row := range rows {
		if got := pick(row); !slices.Equal(got, want[i]) {
			t.Errorf("row %d: %q, want %q", i, got, want[i])
		}
	}
}

func TestNodesJSONHasTheResourcesInBytesAndCores(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	reservingNodes(t, e)

	r := e.runCLI("nodes", "-o", "json")

	assertOK(t, r)
	var list struct {
		Items []struct {
			api.Node
			Status nodeItemStatus `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("decode %q: %v", r.stdout, err)
	}
	if len(list.Items) != 3 {
		t.Fatalf("items %+v, want a, b and c", list.Items)
	}
	a, c := list.Items[0], list.Items[2]
	if a.Reserved != (api.NodeReserved{CPUs: 0.5, Memory: 1 << 30}) {
		t.Errorf("a: registered reserve %+v", a.Reserved)
	}
	res := a.Status.Resources
	if res.Capacity == nil || *res.Capacity != (nodeResources{CPU: 4, Memory: 8 << 30}) ||
		res.ReservedByHost == nil || *res.ReservedByHost != (nodeResources{CPU: 0.5, Memory: 1 << 30}) ||
		res.ReservedBySlots != (nodeResources{CPU: 2.25, Memory: 5 << 29}) ||
		res.Free == nil || *res.Free != (nodeResources{CPU: 1.25, Memory: 9 << 29}) {
		t.Errorf("a: resources %s", r.stdout)
	}
	if res := c.Status.Resources; res.Capacity != nil || res.ReservedByHost != nil || res.Free != nil ||
		res.ReservedBySlots != (nodeResources{CPU: 1, Memory: 1 << 30}) {
		t.Errorf("c, not registered: resources %+v, want only its slots' 1 CPU and 1GiB", res)
	}

	y := e.runCLI("nodes", "-o", "yaml")
	assertOK(t, y)
	assertContains(t, y.stdout, "reservedBySlots:", "cpu: 2.25", "memory: 2684354560")
}
