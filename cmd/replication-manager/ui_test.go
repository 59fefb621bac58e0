package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// uiNow is the clock of the page in these tests.
var uiNow = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// fakeSource is a viewSource of fixed views.
type fakeSource struct {
	origin origin
	views  []registry.ControllerView
	events map[string][]api.Event
	err    error
}

func (f *fakeSource) Origin() origin { return f.origin }

func (f *fakeSource) Controllers(context.Context) (origin, []registry.ControllerView, error) {
	return f.origin, f.views, f.err
}

func (f *fakeSource) Controller(_ context.Context, id string) (origin, registry.ControllerView, bool, error) {
	for _, v := range f.views {
		if v.ID == id {
			return f.origin, v, true, f.err
		}
	}
	return f.origin, registry.ControllerView{}, false, f.err
}

func (f *fakeSource) Events(_ context.Context, id string) ([]api.Event, error) {
	return f.events[id], f.err
}

var leaderOrigin = origin{ctlview.RoleLeader, ctlview.SourceManager}

// view is a controller of the demo image with replicas containers, all
// running and of its template, and a status that says so.
func view(id string, replicas int, conditions ...api.Condition) registry.ControllerView {
	rc := demospec.Controller(id, "demo-task:latest", replicas, nil)
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	v := registry.ControllerView{ID: id, Spec: rc, Revision: 7, Status: &api.ReplicationControllerStatus{
		ID: id, Replicas: replicas, ReadyReplicas: replicas, UpdatedReplicas: replicas, AvailableReplicas: replicas,
		ObservedRevision: 7, Conditions: conditions, LastSyncTime: uiNow.Add(-time.Second),
		CreationTimestamp: uiNow.Add(-3*time.Minute - 10*time.Second),
	}}
	for slot := replicas; slot >= 1; slot-- { // out of order: the page sorts them
		v.Containers = append(v.Containers, api.Task{
			ID: fmt.Sprintf("c%s%d", id, slot), Name: fmt.Sprintf("/%s-%d", id, slot), Image: "demo-task:latest",
			State: api.StateRunning, Created: uiNow.Add(-time.Minute),
			Labels: map[string]string{api.LabelController: id, api.LabelSlot: fmt.Sprint(slot), api.LabelTemplateHash: hash},
		})
	}
	return v
}

func condition(typ, status, reason, message string) api.Condition {
	return api.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: uiNow.Add(-30 * time.Second)}
}

// newTestServer serves the daemon's handler, with the page on src.
func newTestServer(t *testing.T, src viewSource) *httptest.Server {
	t.Helper()
	page := newStatusPage(src, slog.New(slog.DiscardHandler), func() time.Time { return uiNow })
	srv := httptest.NewServer(newHTTPHandler(prometheus.NewRegistry(), nil, page))
	t.Cleanup(srv.Close)
	return srv
}

// reply is what a request got.
type reply struct {
	code   int
	header http.Header
	body   string
}

// fetch does one request.
func fetch(t *testing.T, method, url string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return reply{code: resp.StatusCode, header: resp.Header, body: string(body)}
}

// get fetches url and checks the status code and the content type.
func get(t *testing.T, url string, code int, contentType string) string {
	t.Helper()
	r := fetch(t, http.MethodGet, url)
	if r.code != code || !strings.HasPrefix(r.header.Get("Content-Type"), contentType) {
		t.Fatalf("GET %s = %d %s, want %d %s:\n%s", url, r.code, r.header.Get("Content-Type"), code, contentType, r.body)
	}
	return r.body
}

func assertContains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("%s does not contain %q:\n%s", what, want, body)
		}
	}
}

func assertLacks(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, s := range unwanted {
		if strings.Contains(body, s) {
			t.Errorf("%s contains %q:\n%s", what, s, body)
		}
	}
}

func TestStatusPageListsEveryControllerAsRcctlGetDoes(t *testing.T) {
	t.Parallel()
	failing := view("api", 2, condition(api.ConditionReplicaFailure, "True", api.ReasonCreateFailed, "create api-2: no such image"))
	failing.Status.Replicas, failing.Status.ReadyReplicas, failing.Status.AvailableReplicas = 1, 1, 1
	rolling := view("web", 3, condition(api.ConditionProgressing, "True", api.ReasonRollingUpdate, "1 of 3 updated, 1 available"))
	rolling.Status.UpdatedReplicas = 1
	pending := view("new", 1)
	pending.Status = nil
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{failing, pending, rolling}})

	body := get(t, srv.URL+"/", http.StatusOK, "text/html")

	assertContains(t, "the list", body,
		`<th scope="col">NAME</th><th scope="col">DESIRED</th><th scope="col">CURRENT</th><th scope="col">READY</th><th scope="col">UP-TO-DATE</th><th scope="col">AVAILABLE</th><th scope="col">STATUS</th><th scope="col">IMAGE</th><th scope="col">AGE</th>`,
		`<tr data-id="api" class="state-failing"><td><a href="/controllers/api">api</a></td><td>2</td><td>1</td><td>1</td><td>2</td><td>1</td><td>ImageNotFound</td><td>demo-task:latest</td><td class="age">3m10s</td>`,
		`<span class="badge">failing</span> <span class="reasons">ReplicaFailure: CreateFailed (create api-2: no such image)</span>`,
		`<tr data-id="new" class="state-pending"><td><a href="/controllers/new">new</a></td><td>1</td><td>&lt;none&gt;</td><td>&lt;none&gt;</td><td>&lt;none&gt;</td><td>&lt;none&gt;</td><td>Pending</td><td>demo-task:latest</td><td class="age">&lt;unknown&gt;</td>`,
		`<tr data-id="web" class="state-rolling"><td><a href="/controllers/web">web</a></td><td>3</td><td>3</td><td>3</td><td>1</td><td>3</td><td>Progressing</td>`,
		`<span class="badge">rolling</span> <span class="reasons">Progressing: RollingUpdate</span>`,
		`<p id="summary" aria-live="polite">3 controllers, 1 failing, 1 rolling</p>`,
		`<body data-page="list" data-poll-ms="1500">`,
		`<span id="role" class="role role-leader"`,
		`<script src="/ui/status.js" defer></script>`,
	)
	assertLacks(t, "the list", body, "standby")
}

func TestStatusPageShowsOneControllerAsRcctlDescribeDoes(t *testing.T) {
	t.Parallel()
	v := view("web", 2, condition(api.ConditionProgressing, "True", api.ReasonRolloutComplete, "2 of 2 updated, 2 available"))
	v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports = []api.Port{{Name: "http", ContainerPort: 8080}}
	v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Memory = 64 << 20
	hash := api.TemplateHash(&v.Spec.DesiredState.TaskTemplate)
	v.Containers[1].Labels = map[string]string{api.LabelSlot: "1", api.LabelTemplateHash: hash}  // web-1
	v.Containers[0].Labels = map[string]string{api.LabelSlot: "2", api.LabelTemplateHash: "0ld"} // web-2
	v.Containers[0].State = api.StateExited
	const idA = "sha256:aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111"
	v.Containers[1].ImageID, v.Containers[0].ImageID = idA, "sha256:bbbbbbbbbbbb2222222222222222222222222222222222222222222222222222"
	v.Status.Images = []api.RunningImage{{Image: "demo-task:latest", ImageID: idA, RepoDigest: "demo-task@sha256:dddd", Containers: 1}}
	events := []api.Event{{Controller: "web", Type: api.EventNormal, Reason: "SuccessfulCreate", Message: "created web-1", Time: uiNow.Add(-2 * time.Minute)}}
	for i := range recentEvents {
		events = append(events, api.Event{Controller: "web", Type: api.EventWarning, Reason: "FailedCreate", Message: fmt.Sprintf("attempt %d\nfailed", i), Time: uiNow.Add(-time.Minute)})
	}
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{v}, events: map[string][]api.Event{"web": events}})

	body := get(t, srv.URL+"/controllers/web", http.StatusOK, "text/html")

	assertContains(t, "the page of web", body,
		`<span id="title">web</span> <span id="state" class="badge state-ok" aria-live="polite">ok</span>`,
		`<tr class="depth-0"><th scope="row">Labels:</th><td>name=web</td></tr>`,
		`<tr class="depth-0"><th scope="row">Replicas:</th><td>2 desired</td></tr>`,
		`<tr class="depth-0"><th scope="row">Strategy:</th><td>RollingUpdate (maxUnavailable 1, maxSurge 0)</td></tr>`,
		`<tr class="depth-0"><th scope="row">Command:</th><td>/task --listen :8080</td></tr>`,
		`<tr class="depth-0"><th scope="row">Ports:</th><td>8080/TCP (http)</td></tr>`,
		`<tr class="depth-0"><th scope="row">Memory:</th><td>67108864 bytes (64MiB)</td></tr>`,
		`<tr class="depth-0"><th scope="row">Revision:</th><td>7</td></tr>`,
		`<th scope="row">Status:</th><td>2 current / 2 ready / 2 up to date / 2 available</td>`,
		`<th scope="row">Observed:</th><td>revision 7 (up to date)</td>`,
		`<th scope="row">Last sync:</th><td class="age">2026-11-29T09:59:59Z (1s ago)</td>`,
		`<tr><td>Progressing</td><td>True</td><td>RolloutComplete</td><td>2 of 2 updated, 2 available</td><td class="age">30s</td></tr>`,
		// by slot, with the node, and whether each is of the current template
		// and the image each runs, by short ID
		`<th scope="col">NAME</th><th scope="col">NODE</th><th scope="col">SLOT</th><th scope="col">STATE</th><th scope="col">HEALTH</th><th scope="col">UP-TO-DATE</th><th scope="col">AGE</th><th scope="col">IMAGE-ID</th>`,
		`<tr><td>web-1</td><td>local</td><td>1</td><td>running</td><td>&lt;none&gt;</td><td>yes</td><td class="age">60s</td><td>aaaaaaaaaaaa</td></tr>`+
			`<tr class="not-ready"><td>web-2</td><td>local</td><td>2</td><td>exited</td><td>&lt;none&gt;</td><td>no</td><td class="age">60s</td><td>bbbbbbbbbbbb</td></tr>`,
		// the images the status sums, in full
		`<section><h2>Images</h2><div id="images"><table class="rows"><thead><tr><th scope="col">IMAGE</th><th scope="col">IMAGE-ID</th><th scope="col">REPO-DIGEST</th><th scope="col">CONTAINERS</th></tr></thead>`+
			`<tbody><tr><td>demo-task:latest</td><td>`+idA+`</td><td>demo-task@sha256:dddd</td><td>1</td></tr></tbody></table></div></section>`,
		// the newest recentEvents, messages on one line
		`<tr class="warning"><td class="age">60s</td><td>Warning</td><td>FailedCreate</td><td>attempt 0 failed</td></tr>`,
	)
	assertLacks(t, "the page of web", body, "SuccessfulCreate")
}

func TestStatusPageShowsEveryFieldAsText(t *testing.T) {
	t.Parallel()
	const attack = `<script>alert(1)</script>`
	const escaped = `&lt;script&gt;alert(1)&lt;/script&gt;`
	v := view("web", 1, condition(api.ConditionReplicaFailure, "True", "<b>Bad</b>", attack))
	v.Spec.Labels["tier"] = attack
	v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = `"><img src=x onerror=alert(2)>`
	// an undecodable spec's id is the key's last segment, whatever it holds
	broken := registry.ControllerView{ID: `x"><script>alert(3)</script>`, SpecErr: errors.New("decode controller: " + attack), Revision: 3}
	events := map[string][]api.Event{"web": {{Type: api.EventWarning, Reason: attack, Message: attack, Time: uiNow}}}
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{broken, v}, events: events})

	list := get(t, srv.URL+"/", http.StatusOK, "text/html")
	detail := get(t, srv.URL+"/controllers/web", http.StatusOK, "text/html")
	brokenPage := get(t, srv.URL+"/controllers/"+"x%22%3E%3Cscript%3Ealert%283%29%3C%2Fscript%3E", http.StatusOK, "text/html")

	for name, body := range map[string]string{"the list": list, "the page of web": detail, "the page of the broken one": brokenPage} {
		assertLacks(t, name, body, "<script>alert", "<img", "<b>Bad")
	}
	assertContains(t, "the list", list,
		`<a href="/controllers/x%22%3E%3Cscript%3Ealert%283%29%3C%2Fscript%3E">x&#34;&gt;&lt;script&gt;alert(3)&lt;/script&gt;</a>`,
		`<td>&#34;&gt;&lt;img src=x onerror=alert(2)&gt;</td>`)
	assertContains(t, "the page of web", detail,
		"<th scope=\"row\">Labels:</th><td>name=web,tier="+escaped+"</td>",
		"<td>&lt;b&gt;Bad&lt;/b&gt;</td><td>"+escaped+"</td>",
		"<td>Warning</td><td>"+escaped+"</td><td>"+escaped+"</td>")
	assertContains(t, "the page of the broken one", brokenPage,
		"<th scope=\"row\">Spec:</th><td>&lt;invalid: decode controller: "+escaped+"&gt;</td>")

	// the JSON is valid, and carries the values as they are
	var doc ctlview.List
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/v1/controllers", http.StatusOK, "application/json")), &doc); err != nil {
		t.Fatalf("/api/v1/controllers is not valid JSON: %v", err)
	}
	if got := doc.Items[1].Labels["tier"]; got != attack {
		t.Errorf("label tier in the JSON = %q, want %q", got, attack)
	}
	var one ctlview.One
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/v1/controllers/web", http.StatusOK, "application/json")), &one); err != nil {
		t.Fatalf("/api/v1/controllers/web is not valid JSON: %v", err)
	}
	if got := one.Item.Events[0].Message; got != attack {
		t.Errorf("event message in the JSON = %q, want %q", got, attack)
	}
}

func TestStatusPageNeverShowsEnvironmentValues(t *testing.T) {
	t.Parallel()
	v := view("web", 1)
	v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{
		{Name: "TOKEN", Value: "s3cret-token-value"}, {Name: "MODE", Value: "demo-mode-value"},
	}
	v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.InitContainers = []api.Container{{
		Name: "migrate", Image: "demo-task:latest", Env: []api.EnvVar{{Name: "DB_PASSWORD", Value: "init-s3cret-value"}},
	}}
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{v}})

	for _, path := range []string{"/", "/controllers/web", "/api/v1/controllers", "/api/v1/controllers/web"} {
		assertLacks(t, path, fetch(t, http.MethodGet, srv.URL+path).body, "s3cret-token-value", "demo-mode-value", "init-s3cret-value")
	}
	assertContains(t, "the page of web", get(t, srv.URL+"/controllers/web", http.StatusOK, "text/html"),
		`<th scope="row">Init container 1:</th><td>migrate</td>`,
		`<tr class="depth-2"><th scope="row">DB_PASSWORD:</th><td>&lt;hidden&gt;</td></tr>`)
	assertContains(t, "the page of web", get(t, srv.URL+"/controllers/web", http.StatusOK, "text/html"),
		`<tr class="depth-0"><th scope="row">Environment:</th><td></td></tr><tr class="depth-1"><th scope="row">TOKEN:</th><td>&lt;hidden&gt;</td></tr><tr class="depth-1"><th scope="row">MODE:</th><td>&lt;hidden&gt;</td></tr>`)
	assertContains(t, "/api/v1/controllers/web", get(t, srv.URL+"/api/v1/controllers/web", http.StatusOK, "application/json"),
		`"name": "TOKEN",`, `"value": "<hidden>"`)
	if got := v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env[0].Value; got != "s3cret-token-value" {
		t.Errorf("the view's own spec was changed: env value %q", got)
	}
}

func TestStatusPageAnswersOnlyGetAndHead(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{view("web", 1)}})

	for _, path := range []string{"/", "/controllers/web", "/api/v1/controllers", "/api/v1/controllers/web", "/ui/status.js", "/metrics", "/readyz"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			if r := fetch(t, method, srv.URL+path); r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s = %d, Allow %q; want 405, Allow GET, HEAD", method, path, r.code, r.header.Get("Allow"))
			}
		}
		if r := fetch(t, http.MethodHead, srv.URL+path); r.code != http.StatusOK || r.body != "" {
			t.Errorf("HEAD %s = %d with %d bytes, want 200 and no body", path, r.code, len(r.body))
		}
	}
}

func TestStatusPageUnknownControllerIsNotFound(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{view("web", 1)}})

	assertContains(t, "the page of nope", get(t, srv.URL+"/controllers/nope", http.StatusNotFound, "text/html"),
		"No controller &#34;nope&#34;.")
	var e jsonError
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/v1/controllers/nope", http.StatusNotFound, "application/json")), &e); err != nil || e.Error != `controller "nope" not found` {
		t.Errorf("JSON of nope: %+v, %v; want the error that it is not found", e, err)
	}
	for _, path := range []string{"/nope", "/controllers/", "/controllers/web/more", "/ui/nope.js", "/ui/layout.html"} {
		if r := fetch(t, http.MethodGet, srv.URL+path); r.code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, r.code)
		}
	}
}

func TestControllersJSONHasTheShapeOfRcctlGet(t *testing.T) {
	t.Parallel()
	v := view("web", 2, condition(api.ConditionCrashLoop, "True", "BackOff", "web-1 exited 3 times"))
	v.Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "demo"}}
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin, views: []registry.ControllerView{v}})

	body := get(t, srv.URL+"/api/v1/controllers", http.StatusOK, "application/json")

	var doc struct {
		Manager ctlview.Manager `json:"manager"`
		Items   []struct {
			api.ReplicationController
			Revision int64                            `json:"revision"`
			Status   *api.ReplicationControllerStatus `json:"status"`
			State    string                           `json:"state"`
			Reasons  []string                         `json:"reasons"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if doc.Manager != (ctlview.Manager{Role: ctlview.RoleLeader, Source: ctlview.SourceManager, Time: uiNow}) {
		t.Errorf("manager %+v, want the leader, from its caches, at %s", doc.Manager, uiNow)
	}
	if len(doc.Items) != 1 {
		t.Fatalf("%d items, want 1:\n%s", len(doc.Items), body)
	}
	item := doc.Items[0]
	// the spec's fields where rcctl get -o json has them, env values hidden
	want, err := api.Encode(&api.ReplicationController{ID: "web", Labels: v.Spec.Labels, DesiredState: *ctlview.HideEnv(v.Spec.DesiredState)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := api.Encode(&item.ReplicationController); err != nil || string(got) != string(want) {
		t.Errorf("spec of the item:\n%s\nwant:\n%s", got, want)
	}
	if item.Revision != 7 || item.Status == nil || item.Status.Replicas != 2 || item.State != ctlview.StateFailing || len(item.Reasons) != 1 {
		t.Errorf("item %+v, want revision 7, its status, failing for CrashLoop", item)
	}
	var raw struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw.Items[0], &fields); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"containers", "events"} { // in the document of one controller only
		if _, ok := fields[key]; ok {
			t.Errorf("the list's item has %q", key)
		}
	}
	if _, err := api.Decode(raw.Items[0]); err == nil {
		t.Error("an item decodes as a spec: it could be applied back with its env values <hidden>")
	}
}

func TestStatusPageOfAStandbySaysSoAndShowsNoContainers(t *testing.T) {
	t.Parallel()
	v := view("web", 2)
	v.Containers = nil // etcd has none
	srv := newTestServer(t, &fakeSource{origin: origin{ctlview.RoleStandby, ctlview.SourceEtcd}, views: []registry.ControllerView{v}})

	const notice = "This manager is a standby: another one acts."
	assertContains(t, "the list", get(t, srv.URL+"/", http.StatusOK, "text/html"),
		notice, `<span id="role" class="role role-standby"`, `<td>2</td><td>2</td><td>2</td><td>2</td><td>2</td>`)
	assertContains(t, "the page of web", get(t, srv.URL+"/controllers/web", http.StatusOK, "text/html"),
		notice, `<p class="empty">&lt;unavailable: this manager does not watch Docker; the leader&#39;s page shows them&gt;</p>`)
	assertContains(t, "the JSON", get(t, srv.URL+"/api/v1/controllers", http.StatusOK, "application/json"),
		`"role": "standby",`, `"source": "etcd",`)
}

func TestStatusPageSaysWhenTheControllersCannotBeRead(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeSource{origin: origin{ctlview.RoleStandby, ctlview.SourceEtcd}, err: errors.New("etcd: context deadline exceeded")})

	assertContains(t, "the list", get(t, srv.URL+"/", http.StatusServiceUnavailable, "text/html"),
		"The controllers cannot be read right now: etcd: context deadline exceeded")
	assertContains(t, "the JSON", get(t, srv.URL+"/api/v1/controllers", http.StatusServiceUnavailable, "application/json"),
		`"error": "read controllers: etcd: context deadline exceeded"`)
	get(t, srv.URL+"/controllers/web", http.StatusServiceUnavailable, "text/html")
}

func TestStatusPageServesItsScriptAndStyleWithStrictHeaders(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeSource{origin: leaderOrigin})

	assertContains(t, "status.js", get(t, srv.URL+"/ui/status.js", http.StatusOK, "text/javascript"), "textContent")
	get(t, srv.URL+"/ui/status.css", http.StatusOK, "text/css")
	page := fetch(t, http.MethodGet, srv.URL+"/")
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q, want only the page's own script", csp)
	}
	if got := page.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}

	etag := fetch(t, http.MethodGet, srv.URL+"/ui/status.js").header.Get("ETag")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/ui/status.js", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", etag)
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = again.Body.Close()
	if etag == "" || again.StatusCode != http.StatusNotModified {
		t.Errorf("GET with the ETag %q = %d, want 304", etag, again.StatusCode)
	}
}

// On a standby the page reads etcd: the specs and statuses there, no
// containers; an unknown id is not found.
func TestDaemonSourceReadsEtcdWhenThisManagerDoesNotLead(t *testing.T) {
	t.Parallel()
	srv, err := etcdtest.New(t.TempDir(), fastElection)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(srv.Close)
	store := registry.NewStore(srv.Client(t), "")
	ctx := t.Context()
	if _, err := store.CreateController(ctx, demospec.Controller("web", "demo-task:latest", 2, nil)); err != nil {
		t.Fatal(err)
	}
	if err := store.PutStatus(ctx, &api.ReplicationControllerStatus{ID: "web", Replicas: 2}); err != nil {
		t.Fatal(err)
	}
	// a nested key is not a controller, even when its value is one
	nested, err := api.Encode(demospec.Controller("web", "demo-task:latest", 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client(t).Put(ctx, store.ControllerKey("a/web"), string(nested)); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		leaderElect bool
		want        origin
	}{
		{true, origin{ctlview.RoleStandby, ctlview.SourceEtcd}},
		{false, origin{ctlview.RoleStarting, ctlview.SourceEtcd}},
	} {
		src := daemonSource{current: func() *agent.Agent { return nil }, store: store, leaderElect: tc.leaderElect}
		o, views, err := src.Controllers(ctx)
		if err != nil || o != tc.want || len(views) != 1 || views[0].ID != "web" || views[0].Spec.DesiredState.Replicas != 2 ||
			views[0].Status == nil || views[0].Status.Replicas != 2 || views[0].Containers != nil {
			t.Errorf("leaderElect %v: Controllers = %+v %+v %v, want %+v and web with its status, no containers", tc.leaderElect, o, views, err, tc.want)
		}
		if _, v, ok, err := src.Controller(ctx, "web"); err != nil || !ok || v.Status == nil || v.Revision == 0 {
			t.Errorf("Controller(web) = %+v %v %v, want web with its status and revision", v, ok, err)
		}
		for _, id := range []string{"nope", "a/web"} {
			if _, _, ok, err := src.Controller(ctx, id); err != nil || ok {
				t.Errorf("Controller(%s) = %v %v, want not found", id, ok, err)
			}
		}
	}
}

// Two daemons on one etcd: the leader's page shows its caches, containers
// included; the standby's says it is one and shows etcd's specs and
// statuses.
func TestStatusPageOfEachDaemonSaysWhetherItLeads(t *testing.T) {
	t.Parallel()
	srv, err := etcdtest.New(t.TempDir(), fastElection)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(srv.Close)
	store := registry.NewStore(srv.Client(t), "")
	if _, err := store.CreateController(t.Context(), demospec.Controller("web", "demo-task:latest", 2, nil)); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	var bases []string
	var dones []chan error
	for _, name := range []string{"one", "two"} {
		opts := newOptions()
		opts.EtcdServers = []string{srv.ClientURL}
		opts.MetricsBindAddress = freeLoopbackAddr(t)
		opts.LeaderElectLeaseDuration = 2 * time.Second
		opts.LeaderElectIdentity = name
		if err := opts.Validate(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- serve(ctx, opts, slog.New(slog.DiscardHandler), &taskcontrol.Fake{}) }()
		bases, dones = append(bases, "http://"+opts.MetricsBindAddress), append(dones, done)
	}
	t.Cleanup(func() {
		stop()
		for _, done := range dones {
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
	})

	roles := map[string]ctlview.One{}
	testpoll.Until(t, waitTimeout, "a leader with web's 2 containers, and a standby", func() bool {
		clear(roles)
		for _, base := range bases {
			code, body, err := getHTTP(base + "/api/v1/controllers/web")
			var doc ctlview.One
			if err != nil || code != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
				return false
			}
			roles[doc.Manager.Role] = doc
		}
		leader := roles[ctlview.RoleLeader]
		return len(roles) == 2 && len(leader.Item.Containers) == 2 && leader.Item.Status != nil && leader.Item.Status.Replicas == 2
	})
	standby, ok := roles[ctlview.RoleStandby]
	if !ok || standby.Manager.Source != ctlview.SourceEtcd || standby.Item.Containers != nil || standby.Item.DesiredState.Replicas != 2 {
		t.Errorf("the other daemon's document: %+v; want a standby reading etcd, web's spec and no containers", standby)
	}
}

// benchViews are 1,000 controllers of 10 containers each, one in ten
// failing and one in ten rolling.
func benchViews() []registry.ControllerView {
	views := make([]registry.ControllerView, 1000)
	for i := range views {
		var conds []api.Condition
		switch i % 10 {
		case 3:
			conds = append(conds, condition(api.ConditionReplicaFailure, "True", api.ReasonCreateFailed, "create: no such image"))
		case 7:
			conds = append(conds, condition(api.ConditionProgressing, "True", api.ReasonRollingUpdate, "5 of 10 updated, 5 available"))
		default:
			conds = append(conds, condition(api.ConditionProgressing, "True", api.ReasonRolloutComplete, "10 of 10 updated, 10 available"))
		}
		views[i] = view(fmt.Sprintf("controller-%04d", i), 10, conds...)
		views[i].Spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "bench"}}
	}
	return views
}

// benchmarkGet measures one GET of path through the daemon's handler.
func benchmarkGet(b *testing.B, path string) {
	b.Helper()
	page := newStatusPage(&fakeSource{origin: leaderOrigin, views: benchViews()}, slog.New(slog.DiscardHandler), func() time.Time { return uiNow })
	handler := newHTTPHandler(prometheus.NewRegistry(), nil, page)
	size := 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequestWithContext(b.Context(), http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s = %d", path, rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/response")
}

// BenchmarkStatusPage serves / with 1,000 controllers of 10 containers.
func BenchmarkStatusPage(b *testing.B) { benchmarkGet(b, "/") }

// BenchmarkControllersJSON serves /api/v1/controllers with 1,000
// controllers of 10 containers.
func BenchmarkControllersJSON(b *testing.B) { benchmarkGet(b, "/api/v1/controllers") }

// BenchmarkControllerPage serves one controller's page among 1,000.
func BenchmarkControllerPage(b *testing.B) { benchmarkGet(b, "/controllers/controller-0500") }
