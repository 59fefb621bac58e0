package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// fakeCluster is a clusterView of fixed nodes and events, and of a
// leader or none.
type fakeCluster struct {
	nodes      nodeData
	events     []api.Event
	leaderless bool
}

func (f *fakeCluster) Nodes(context.Context) (nodeData, error) { return f.nodes, nil }

func (f *fakeCluster) Leaderless(context.Context) bool { return f.leaderless }

func (f *fakeCluster) RecentEvents(_ context.Context, n int) ([]api.Event, error) {
	return f.events[:min(n, len(f.events))], nil
}

// newClusterServer serves the daemon's handler with the page on src and
// cluster, and a clock the test moves.
func newClusterServer(t *testing.T, src viewSource, cluster clusterView, clock *atomic.Int64) *httptest.Server {
	t.Helper()
	page := newStatusPage(src, slog.New(slog.DiscardHandler), func() time.Time { return uiNow.Add(time.Duration(clock.Load())) })
	page.cluster = cluster
	srv := httptest.NewServer(newHTTPHandler(prometheus.NewRegistry(), nil, page))
	t.Cleanup(srv.Close)
	return srv
}

// A container removed by hand and being replaced: the manager says
// Progressing RollingUpdate, but no template rolls, so the page says
// degraded, with how many are available, and not rolling.
func TestStatusPageShowsAReplacementAsDegradedNotRolling(t *testing.T) {
	t.Parallel()
	replacing := view("web", 3, condition(api.ConditionProgressing, "True", api.ReasonRollingUpdate, "2 of 3 updated, 2 available"))
	replacing.Status.Replicas, replacing.Status.ReadyReplicas, replacing.Status.UpdatedReplicas, replacing.Status.AvailableReplicas = 2, 2, 2, 2
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{replacing}})

	list := get(t, srv.URL+"/", http.StatusOK, "text/html")
	assertContains(t, "the list", list,
		`<tr data-id="web" class="state-degraded">`,
		`<span class="badge">degraded</span> <span class="reasons">2 of 3 available</span>`,
		`1 controller, 1 degraded</p>`)
	assertLacks(t, "the list", list, "rolling")
	assertContains(t, "the page of web", get(t, srv.URL+"/controllers/web", http.StatusOK, "text/html"),
		`<span id="state" class="badge state-degraded" aria-live="polite">degraded</span> <span id="reasons" class="reasons">2 of 3 available</span>`)
	var doc listDocument
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/v1/controllers", http.StatusOK, "application/json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Items[0].State != ctlview.StateDegraded || doc.Page.Rows[0].State != ctlview.StateDegraded {
		t.Errorf("JSON states %q and %q, want degraded", doc.Items[0].State, doc.Page.Rows[0].State)
	}
}

// The JSON carries the strings the page shows, so that the script formats
// nothing, and an ETag over all of it but the clock: asked again with it,
// the answer is 304 until something shown changes.
func TestStatusPageJSONCarriesThePageStringsAndAnETag(t *testing.T) {
	t.Parallel()
	src := &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{view("web", 2)}}
	var clock atomic.Int64
	srv := newClusterServer(t, src, nil, &clock)

	first := fetch(t, http.MethodGet, srv.URL+"/api/v1/controllers")
	var doc listDocument
	if err := json.Unmarshal([]byte(first.body), &doc); err != nil {
		t.Fatal(err)
	}
	row := doc.Page.Rows[0]
	if row.ID != "web" || row.Desired != "2" || row.Age != "3m10s" || row.Image != "demo-task:latest" || doc.Page.Summary != "1 controller" {
		t.Errorf("the page's strings in the JSON: %+v %q", row, doc.Page.Summary)
	}
	if !doc.Manager.Time.Equal(uiNow) || first.header.Get(asOfHeader) != "10:00:00 UTC" {
		t.Errorf("manager time %s, %s %q; want %s", doc.Manager.Time, asOfHeader, first.header.Get(asOfHeader), uiNow)
	}
	etag := first.header.Get("ETag")
	conditional := func() reply {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1/controllers", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("If-None-Match", etag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return reply{code: resp.StatusCode, header: resp.Header, body: string(body)}
	}
	clock.Store(int64(100 * time.Millisecond)) // the clock moves, nothing shown changes
	if r := conditional(); etag == "" || r.code != http.StatusNotModified || r.body != "" || r.header.Get(asOfHeader) == "" {
		t.Errorf("GET with If-None-Match %q = %d with %d bytes, %s %q; want 304, empty, with the clock", etag, r.code, len(r.body), asOfHeader, r.header.Get(asOfHeader))
	}
	clock.Store(int64(time.Second)) // the age shown changes: 3m11s
	if r := conditional(); r.code != http.StatusOK || r.header.Get("ETag") == etag || !strings.Contains(r.body, `"age": "3m11s"`) {
		t.Errorf("GET after the age changed = %d, ETag %q (was %q); want 200 with a new ETag", r.code, r.header.Get("ETag"), etag)
	}
	etag = fetch(t, http.MethodGet, srv.URL+"/api/v1/controllers/web").header.Get("ETag")
	if etag == "" {
		t.Error("the document of web has no ETag")
	}
}

func TestStatusPageNodesViewShowsCapacityReservationsFreeContainersLeaseAndGoneNodes(t *testing.T) {
	t.Parallel()
	cluster := &fakeCluster{nodes: nodeData{
		registered: []api.Node{{Name: "a", Labels: map[string]string{"zone": "a"}, Capacity: api.NodeCapacity{CPUs: 4, Memory: 8 << 30},
			Reserved: api.NodeReserved{CPUs: 0.5, Memory: 1 << 30}, Lease: "694d8a7c3f1e2b05", RegisteredAt: uiNow.Add(-time.Hour)}},
		assigned:   map[string]int{"a": 3, "b": 1},
		containers: map[string]int{"a": 3, "b": 1},
		ttl:        map[string]int64{"a": 12},
		stats: []leader.NodeStat{{Name: "a", Alive: true, Assigned: 3, Containers: 3, ReservedMemory: 192 << 20, ReservedCPU: 0.75},
			{Name: "b", Assigned: 1, Containers: 1}},
		gone: []api.GoneNode{{Name: "c", GoneSince: uiNow.Add(-5 * time.Second), Containers: []api.GoneContainer{
			{Controller: "web", Slot: 2, Name: "web-2", Image: "demo-task:latest", State: api.StateRunning}}}},
	}}
	var clock atomic.Int64
	srv := newClusterServer(t, &fakeSource{origin: leaderOrigin}, cluster, &clock)

	body := get(t, srv.URL+"/nodes", http.StatusOK, "text/html")
	assertContains(t, "the nodes view", body,
		`<th scope="col">NAME</th><th scope="col">STATUS</th><th scope="col">LABELS</th><th scope="col">CPUS</th><th scope="col">MEMORY</th><th scope="col">RESERVED CPU</th><th scope="col">RESERVED MEMORY</th><th scope="col">FREE CPU</th><th scope="col">FREE MEMORY</th><th scope="col">ASSIGNED</th><th scope="col">CONTAINERS</th><th scope="col">LEASE</th><th scope="col">AGE</th>`,
		`<tr data-key="a"><td>a</td><td>Ready</td><td>zone=a</td><td>4 (0.5 kept by the host)</td><td>8GiB (1GiB kept by the host)</td><td>0.75</td><td>192MiB</td><td>2.75</td><td>6.812GiB</td><td>3</td><td>3</td><td class="age">694d8a7c3f1e2b05 (12s left)</td><td class="age">60m</td></tr>`,
		`<tr data-key="b" class="not-ready"><td>b</td><td>NotReady</td>`,
		`<tr data-key="c" class="not-ready"><td>c</td><td class="age">Gone 5s</td>`,
		`<th scope="col">NODE</th><th scope="col">GONE</th><th scope="col">CONTROLLER</th><th scope="col">NAME</th><th scope="col">SLOT</th><th scope="col">IMAGE</th><th scope="col">STATE</th>`,
		`<tr data-key="c"><td>c</td><td class="age">5s ago</td><td>web</td><td>web-2</td><td>2</td><td>demo-task:latest</td><td>running</td></tr>`,
		`<p id="summary" aria-live="polite">3 nodes, 1 ready, 1 gone</p>`,
		`<input id="filter" type="search"`,
		`<a href="/nodes" aria-current="page">Nodes</a>`)
	var doc nodesDocument
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/v1/nodes", http.StatusOK, "application/json")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Page.Nodes.Rows) != 3 || doc.Page.Nodes.Rows[0].Cells[11].Text != "694d8a7c3f1e2b05 (12s left)" || len(doc.Page.Gone.Rows) != 1 {
		t.Errorf("the nodes in the JSON: %+v %+v", doc.Page.Nodes, doc.Page.Gone)
	}

	// a standby knows no reservations: the leader's page shows them
	cluster.nodes.stats, cluster.nodes.gone = nil, nil
	standby := newClusterServer(t, &fakeSource{origin: origin{ctlview.RoleStandby, ctlview.SourceEtcd}}, cluster, &clock)
	assertContains(t, "a standby's nodes view", get(t, standby.URL+"/nodes", http.StatusOK, "text/html"),
		`<td>&lt;leader only&gt;</td><td>&lt;leader only&gt;</td><td>&lt;leader only&gt;</td><td>&lt;leader only&gt;</td>`,
		"reservations are shown by the leader&#39;s page", `<p class="empty">No node is gone.</p>`)
}

func TestStatusPageNodesViewShowsAvailabilityAndWhereEachLabelComesFrom(t *testing.T) {
	t.Parallel()
	cluster := &fakeCluster{nodes: nodeData{
		registered: []api.Node{{Name: "a", Labels: map[string]string{"zone": "a"}, RegisteredAt: uiNow},
			{Name: "b", Labels: map[string]string{"disk": "ssd", "zone": "b"}, RegisteredAt: uiNow}},
		configs: map[string]api.NodeConfig{"a": {Availability: api.NodeDrain}, "b": {Availability: api.NodePause, Labels: map[string]string{"zone": "c"}}},
	}}
	var clock atomic.Int64
	srv := newClusterServer(t, &fakeSource{origin: leaderOrigin}, cluster, &clock)

	assertContains(t, "the nodes view", get(t, srv.URL+"/nodes", http.StatusOK, "text/html"),
		`<tr data-key="a"><td>a</td><td>Ready,Draining</td><td>zone=a</td>`,
		`<tr data-key="b"><td>b</td><td>Ready,Paused</td><td>disk=ssd,zone=c(key)</td>`)
}

func TestStatusPageEventFeedShowsTheEventsOfEveryController(t *testing.T) {
	t.Parallel()
	cluster := &fakeCluster{events: []api.Event{
		{Controller: "web", Type: api.EventNormal, Reason: "SuccessfulCreate", Message: "created web-3", Time: uiNow.Add(-5 * time.Second)},
		{Controller: "api", Type: api.EventWarning, Reason: "FailedCreate", Message: "create api-1:\nno such image", Time: uiNow.Add(-time.Minute)},
	}}
	var clock atomic.Int64
	srv := newClusterServer(t, &fakeSource{origin: leaderOrigin}, cluster, &clock)

	assertContains(t, "the event feed", get(t, srv.URL+"/events", http.StatusOK, "text/html"),
		`<th scope="col">AGE</th><th scope="col">CONTROLLER</th><th scope="col">TYPE</th><th scope="col">REASON</th><th scope="col">MESSAGE</th>`,
		`<tr data-key="web"><td class="age">5s</td><td>web</td><td>Normal</td><td>SuccessfulCreate</td><td>created web-3</td></tr>`+
			`<tr data-key="api" class="warning"><td class="age">60s</td><td>api</td><td>Warning</td><td>FailedCreate</td><td>create api-1: no such image</td></tr>`,
		"2 events over every controller, newest first; 1 warnings")
	var doc eventsDocument
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/v1/events", http.StatusOK, "application/json")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Page.Events.Rows) != 2 || doc.Page.Events.Rows[1].Cells[1].Text != "api" {
		t.Errorf("the events in the JSON: %+v", doc.Page.Events)
	}
}

// While the managers take part in the leader election and none holds
// it, every page and document says that no manager leads.
func TestTheStatusPageSaysWhenNoManagerLeads(t *testing.T) {
	t.Parallel()
	src := &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{view("web", 1)}}
	const notice = "No manager leads (none holds the leader election)"
	for _, leaderless := range []bool{true, false} {
		srv := newClusterServer(t, src, &fakeCluster{leaderless: leaderless}, &atomic.Int64{})
		for _, path := range []string{"/", "/controllers/web", "/nodes", "/events"} {
			page := get(t, srv.URL+path, http.StatusOK, "text/html")
			if got := strings.Contains(page, notice); got != leaderless {
				t.Errorf("%s with leaderless %v: notice shown %v", path, leaderless, got)
			}
		}
		doc := get(t, srv.URL+"/api/v1/controllers", http.StatusOK, "application/json")
		if got := strings.Contains(doc, `"leaderless": true`); got != leaderless {
			t.Errorf("/api/v1/controllers with leaderless %v: %q in the manager %v", leaderless, `"leaderless": true`, got)
		}
	}
}
