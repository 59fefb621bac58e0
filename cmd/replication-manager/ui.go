package main

// This file is the status page (docs/CONTRACT.md, Programs), served on
// --metrics-bind-address beside /metrics: / lists every controller as
// `rcctl get` does, /controllers/<id> shows one as `rcctl describe` does,
// and /api/v1/controllers and /api/v1/controllers/<id> serve the same data
// as JSON (internal/ctlview's documents), which the page's script polls to
// stay live without a reload.
//
// It is read-only: nothing here writes to etcd or Docker, and the server
// answers only GET and HEAD (http.go). What it shows comes from whoever
// can write to etcd, so every field goes through html/template, or
// textContent in the script, and environment values are never shown.
//
// Where the data comes from: on the leader, the manager's own caches
// (agent.Agent.Controllers: no etcd or Docker call per
// request, except the events of one controller); on a standby, or on a
// leader before its first list, etcd (specs and statuses, two range
// reads per request). Containers are then not shown: a standby does not
// watch Docker, and the leader's page has them.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
)

//go:embed ui
var uiFiles embed.FS

// pollInterval is how often the page's script asks for fresh data.
const pollInterval = 1500 * time.Millisecond

// uiReadTimeout bounds the etcd reads of one request.
const uiReadTimeout = 5 * time.Second

// recentEvents is how many of a controller's newest events the page and
// its JSON show, as rcctl describe does.
const recentEvents = 20

// localNode names the Docker engine of the containers of a manager that is
// no node of several (one that keeps every slot itself).
const localNode = "local"

// origin says which manager answers and where its data comes from
// (ctlview.Role*, ctlview.Source*).
type origin struct{ role, source string }

// viewSource is where the status page reads controllers from.
type viewSource interface {
	// Origin says which manager answers and where its data comes from.
	Origin() origin
	// Controllers returns every controller, by id.
	Controllers(ctx context.Context) (origin, []registry.ControllerView, error)
	// Controller returns one controller; false when there is none of that id.
	Controller(ctx context.Context, id string) (origin, registry.ControllerView, bool, error)
	// Events returns the controller's events, oldest first.
	Events(ctx context.Context, id string) ([]api.Event, error)
}

// daemonSource reads the manager of the term in progress when there is one
// and it has listed the controllers, else etcd.
type daemonSource struct {
	// current is the manager of the term in progress; nil on a standby.
	current func() *agent.Agent
	store   *registry.Store
	// leaderElect tells a standby (another manager acts) from a lone
	// manager that is starting.
	leaderElect bool
}

// manager returns the manager to read, nil when etcd is to be read, and
// the origin of the data.
func (s daemonSource) manager() (*agent.Agent, origin) {
	rm := s.current()
	switch {
	case rm != nil && rm.Synced():
		return rm, origin{ctlview.RoleLeader, ctlview.SourceManager}
	case rm != nil || !s.leaderElect:
		return nil, origin{ctlview.RoleStarting, ctlview.SourceEtcd}
	}
	return nil, origin{ctlview.RoleStandby, ctlview.SourceEtcd}
}

func (s daemonSource) Origin() origin {
	_, o := s.manager()
	return o
}

func (s daemonSource) Controllers(ctx context.Context) (origin, []registry.ControllerView, error) {
	rm, o := s.manager()
	if rm != nil {
		views := rm.Controllers()
		// a node knows its own share: the status over every node is the
		// leader's, in etcd
		statuses, err := s.store.ListStatuses(ctx)
		if err != nil {
			return o, nil, err
		}
		for i := range views {
			views[i].Status = statuses[views[i].ID]
		}
		return o, views, nil
	}
	specs, _, err := s.store.ListControllers(ctx)
	if err != nil {
		return o, nil, err
	}
	statuses, err := s.store.ListStatuses(ctx)
	if err != nil {
		return o, nil, err
	}
	views := make([]registry.ControllerView, len(specs))
	for i, spec := range specs {
		views[i] = etcdView(spec, statuses[spec.ID])
	}
	return o, views, nil
}

func (s daemonSource) Controller(ctx context.Context, id string) (origin, registry.ControllerView, bool, error) {
	rm, o := s.manager()
	if rm != nil {
		v, ok := rm.Controller(id)
		if !ok {
			return o, v, false, nil
		}
		err := s.fromEtcd(ctx, &v)
		return o, v, true, err
	}
	if !s.store.IsControllerKey(s.store.ControllerKey(id)) {
		// an id with a slash (%2F in the URL) names a nested key, which is
		// not a controller (docs/CONTRACT.md, etcd layout)
		return o, registry.ControllerView{}, false, nil
	}
	spec, err := s.store.GetController(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return o, registry.ControllerView{}, false, nil
	}
	if err != nil {
		return o, registry.ControllerView{}, false, err
	}
	st, err := s.store.GetStatus(ctx, id)
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return o, registry.ControllerView{}, false, err
	}
	return o, etcdView(spec, st), true, nil
}

// fromEtcd gives a node's view of a controller the status over every node,
// and the other nodes' containers, from etcd.
func (s daemonSource) fromEtcd(ctx context.Context, v *registry.ControllerView) error {
	st, err := s.store.GetStatus(ctx, v.ID)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		v.Status = nil
	case err != nil:
		return err
	default:
		v.Status = st
	}
	reports, err := s.store.ListReports(ctx, v.ID)
	if err != nil {
		return err
	}
	for _, r := range reports {
		if r.Node != v.Node {
			v.Elsewhere = append(v.Elsewhere, r)
		}
	}
	return nil
}

func (s daemonSource) Events(ctx context.Context, id string) ([]api.Event, error) {
	return s.store.ListEvents(ctx, id)
}

// etcdView is a controller as etcd has it: no containers.
func etcdView(spec registry.Spec, st *api.ReplicationControllerStatus) registry.ControllerView {
	return registry.ControllerView{ID: spec.ID, Spec: spec.Controller, SpecErr: spec.Err, Revision: spec.ModRevision, Status: st}
}

// statusPage serves the pages, their JSON and their assets.
type statusPage struct {
	source viewSource
	// cluster feeds the nodes view and the event feed; nil serves them
	// empty.
	cluster clusterView
	logger  *slog.Logger
	now     func() time.Time
	list    *template.Template
	detail  *template.Template
	nodes   *template.Template
	events  *template.Template
	// missing is the page of an unknown controller, or of an error.
	missing *template.Template
	assets  map[string]asset
}

// asset is a file of ui/ served as it is.
type asset struct {
	data        []byte
	contentType string
	etag        string
}

// newStatusPage parses the templates and loads the assets; logger gets the
// errors of requests that fail.
func newStatusPage(source viewSource, logger *slog.Logger, now func() time.Time) *statusPage {
	parse := func(page string) *template.Template {
		return template.Must(template.New("layout.html").Funcs(templateFuncs).ParseFS(uiFiles, "ui/layout.html", "ui/blocks.html", "ui/"+page))
	}
	p := &statusPage{
		source: source, logger: logger, now: now,
		list:    parse("list.html"),
		detail:  parse("detail.html"),
		nodes:   parse("nodes.html"),
		events:  parse("events.html"),
		missing: parse("missing.html"),
		assets:  make(map[string]asset),
	}
	for name, contentType := range map[string]string{
		"status.js":  "text/javascript; charset=utf-8",
		"status.css": "text/css; charset=utf-8",
	} {
		data, err := fs.ReadFile(uiFiles, "ui/"+name)
		if err != nil {
			panic(fmt.Sprintf("status page: embedded %s: %v", name, err)) // the build embeds it
		}
		sum := sha256.Sum256(data)
		p.assets[name] = asset{data: data, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return p
}

// register adds the page's routes to mux. A pattern's method GET also
// answers HEAD.
func (p *statusPage) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", p.serveList)
	mux.HandleFunc("GET /controllers/{id}", p.serveDetail)
	mux.HandleFunc("GET /api/v1/controllers", p.serveListJSON)
	mux.HandleFunc("GET /api/v1/controllers/{id}", p.serveDetailJSON)
	mux.HandleFunc("GET /nodes", p.serveNodes)
	mux.HandleFunc("GET /api/v1/nodes", p.serveNodesJSON)
	mux.HandleFunc("GET /events", p.serveEvents)
	mux.HandleFunc("GET /api/v1/events", p.serveEventsJSON)
	mux.HandleFunc("GET /ui/{name}", p.serveAsset)
}

func (p *statusPage) serveList(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	o, views, err := p.source.Controllers(ctx)
	if err != nil {
		p.failPage(w, r, p.manager(ctx, o), err)
		return
	}
	p.writePage(w, r, http.StatusOK, p.list, newListPage(p.manager(ctx, o), views))
}

func (p *statusPage) serveDetail(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	item, m, found, err := p.one(ctx, id)
	if err != nil {
		p.failPage(w, r, m, err)
		return
	}
	if !found {
		p.writePage(w, r, http.StatusNotFound, p.missing, missingPage{head: newHead("missing", m), Title: "Not found",
			Message: fmt.Sprintf("No controller %q.", id)})
		return
	}
	p.writePage(w, r, http.StatusOK, p.detail, newDetailPage(m, item))
}

func (p *statusPage) serveListJSON(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	o, views, err := p.source.Controllers(ctx)
	if err != nil {
		p.failJSON(w, r, err)
		return
	}
	items := make([]ctlview.Controller, len(views))
	for i, v := range views {
		items[i] = controllerItem(v)
	}
	m := p.manager(ctx, o)
	page := newListPage(m, views)
	p.writeDocument(w, r, m, func(m ctlview.Manager) any {
		return listDocument{List: ctlview.List{Manager: m, Items: items}, Page: page}
	})
}

func (p *statusPage) serveDetailJSON(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	item, m, found, err := p.one(ctx, id)
	if err != nil {
		p.failJSON(w, r, err)
		return
	}
	if !found {
		p.writeJSON(w, r, http.StatusNotFound, jsonError{Error: fmt.Sprintf("controller %q not found", id)})
		return
	}
	page := newDetailPage(m, item)
	p.writeDocument(w, r, m, func(m ctlview.Manager) any {
		return oneDocument{One: ctlview.One{Manager: m, Item: item}, Page: page}
	})
}

// one reads a controller with its containers and its recent events.
func (p *statusPage) one(ctx context.Context, id string) (ctlview.Controller, ctlview.Manager, bool, error) {
	o, v, found, err := p.source.Controller(ctx, id)
	m := p.manager(ctx, o)
	if err != nil || !found {
		return ctlview.Controller{}, m, false, err
	}
	events, err := p.source.Events(ctx, id)
	if err != nil {
		return ctlview.Controller{}, m, false, err
	}
	item := controllerItem(v)
	item.Containers = containerItems(v)
	item.Events = events[max(0, len(events)-recentEvents):]
	return item, m, true, nil
}

func (p *statusPage) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := p.assets[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	securityHeaders(w)
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("ETag", a.etag)
	w.Header().Set("Cache-Control", "no-cache") // revalidated by its ETag: a new daemon serves its own
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.data))
}

// manager says who answers, from o, and whether any manager leads.
func (p *statusPage) manager(ctx context.Context, o origin) ctlview.Manager {
	m := ctlview.Manager{Role: o.role, Source: o.source, Time: p.now().UTC()}
	if p.cluster != nil {
		m.Leaderless = p.cluster.Leaderless(ctx)
	}
	return m
}

// writePage renders a whole page before writing it, so that a template
// error is a 500 rather than half a page.
func (p *statusPage) writePage(w http.ResponseWriter, r *http.Request, code int, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		p.logger.Error("status page: render", "path", r.URL.Path, "err", err)
		http.Error(w, "status page: render failed", http.StatusInternalServerError)
		return
	}
	securityHeaders(w)
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes()) // the client may have gone
}

// failPage answers a request whose data could not be read.
func (p *statusPage) failPage(w http.ResponseWriter, r *http.Request, m ctlview.Manager, err error) {
	p.logger.Warn("status page: read controllers", "path", r.URL.Path, "err", err)
	p.writePage(w, r, http.StatusServiceUnavailable, p.missing, missingPage{
		head:  newHead("missing", m),
		Title: "Unavailable", Message: "The controllers cannot be read right now: " + err.Error(),
	})
}

// jsonError is the body of a JSON answer that has no data.
type jsonError struct {
	Error string `json:"error"`
}

func (p *statusPage) failJSON(w http.ResponseWriter, r *http.Request, err error) {
	p.logger.Warn("status page: read controllers", "path", r.URL.Path, "err", err)
	p.writeJSON(w, r, http.StatusServiceUnavailable, jsonError{Error: "read controllers: " + err.Error()})
}

func (p *statusPage) writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	data, err := ctlview.EncodeJSON(v)
	if err != nil {
		p.logger.Error("status page: encode", "path", r.URL.Path, "err", err)
		http.Error(w, "status page: encode failed", http.StatusInternalServerError)
		return
	}
	jsonHeaders(w)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// pageCSP lets a page run only its own script and style, fetch only its
// own origin, and be framed by nobody.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func securityHeaders(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// controllerItem is a view as the JSON shows it, without its containers
// and events.
func controllerItem(v registry.ControllerView) ctlview.Controller {
	item := ctlview.Controller{ID: v.ID, Revision: v.Revision, Status: v.Status}
	desired := -1
	if v.SpecErr != nil || v.Spec == nil {
		item.SpecError = ctlview.OneLine(cmp.Or(v.SpecErr, errors.New("no spec")))
	} else {
		item.Labels = v.Spec.Labels
		item.DesiredState = ctlview.HideEnv(v.Spec.DesiredState)
		desired = v.Spec.DesiredState.Replicas
	}
	item.State, item.Reasons = ctlview.Glance(desired, v.Status, v.SpecErr)
	return item
}

// containerItems lists a view's containers by slot, then name, as rcctl
// describe does; nil when the view has none.
func containerItems(v registry.ControllerView) []ctlview.Container {
	if len(v.Containers) == 0 && len(v.Elsewhere) == 0 && len(v.Pulling) == 0 {
		return nil
	}
	hash := ""
	if v.SpecErr == nil && v.Spec != nil {
		hash = api.TemplateHash(&v.Spec.DesiredState.TaskTemplate)
	}
	node := cmp.Or(v.Node, localNode)
	out := make([]ctlview.Container, 0, len(v.Containers))
	for _, t := range v.Containers {
		out = append(out, ctlview.Container{
			Name: strings.TrimPrefix(t.Name, "/"), Node: node, Slot: t.Labels[api.LabelSlot],
			State: t.State, Health: t.Health, Image: t.Image, Created: t.Created,
			UpToDate: hash != "" && t.Labels[api.LabelTemplateHash] == hash,
			ImageID:  t.ImageID, RepoDigest: t.RepoDigest,
		})
	}
	out = append(out, pullingItems(node, v.Pulling)...)
	for _, r := range v.Elsewhere {
		out = append(out, pullingItems(r.Node, r.Pulling)...)
		for _, t := range r.Tasks {
			slot := ""
			if t.Slot > 0 {
				slot = strconv.Itoa(t.Slot)
			}
			upToDate := hash != "" && t.TemplateHash == hash
			out = append(out, ctlview.Container{
				Name: t.Name, Node: r.Node, Slot: slot, State: t.State, Health: t.Health, Image: t.Image,
				Created: t.Created, UpToDate: upToDate, ImageID: t.ImageID, RepoDigest: t.RepoDigest,
			})
			for _, p := range t.Parts { // the task's other containers
				out = append(out, ctlview.Container{Name: p.Name, Node: r.Node, Slot: slot, State: p.State, Health: p.Health,
					Image: p.Image, Created: t.Created, UpToDate: upToDate, ImageID: p.ImageID, RepoDigest: p.RepoDigest})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b ctlview.Container) int {
		return cmp.Or(cmp.Compare(ctlview.SlotOrder(a.Slot), ctlview.SlotOrder(b.Slot)), strings.Compare(a.Name, b.Name))
	})
	return out
}

// pullingItems are the slots of a node waiting for their image's pull, as
// rows of state "pulling" whose age is how long the pull has taken.
func pullingItems(node string, pulling []api.PullingSlot) []ctlview.Container {
	out := make([]ctlview.Container, 0, len(pulling))
	for _, p := range pulling {
		out = append(out, ctlview.Container{Name: ctlview.None, Node: node, Slot: strconv.Itoa(p.Slot),
			State: ctlview.StatePulling, Image: p.Image, Created: p.Since, UpToDate: true})
	}
	return out
}

// templateFuncs are the helpers the templates call.
var templateFuncs = template.FuncMap{
	// pathEscape makes an id one path segment of a link.
	"pathEscape": url.PathEscape,
}
