package e2e

// The status page (docs/CONTRACT.md, Programs) of a running daemon, in a real
// headless browser (Debian's chromium, driven by chromedp): it follows a
// scale without a reload, marks a failing and a rolling controller, shows
// after its script's refresh what the daemon rendered first, and never
// shows an environment value.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// requireBrowserEnv set to 1 turns the skip of a missing browser into a
// failure (.ci/run sets it).
const requireBrowserEnv = "REQUIRE_BROWSER"

// screenshotEnv names a PNG file for the test to write the list page to
// (docs/status-page.png is made so).
const screenshotEnv = "STATUS_PAGE_SCREENSHOT"

// requireBrowser returns the path of a headless-capable browser, or skips
// the test loudly (fails it with REQUIRE_BROWSER=1).
func requireBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	msg := "no browser for the status page test: chromium is not on PATH (apt-get install -y chromium)"
	if os.Getenv(requireBrowserEnv) == "1" {
		t.Fatalf("%s, and %s=1 requires one", msg, requireBrowserEnv)
	}
	t.Skipf("SKIPPING: %s; set %s=1 to make this a failure", msg, requireBrowserEnv)
	return ""
}

// browser is one headless browser tab for a test, and what its pages wrote
// to the console as errors.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// newBrowser starts the browser; it stops when the test ends.
func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 640))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses root with its sandbox
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	b := &browser{ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError && !strings.Contains(m.String(), "net::ERR_NETWORK_CHANGED") {
				// a fetch cut by the host's network changing (every
				// container another test starts adds an interface) is the
				// machine's, not the page's: the next poll fetches again
				b.mu.Lock()
				b.errors = append(b.errors, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs actions in the tab, failing the test on an error.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// open loads a page and marks it, to tell a reload. A load cut by the
// host's network changing (every container another test starts adds an
// interface: net::ERR_NETWORK_CHANGED) is the machine's, not the page's:
// the page is loaded again, up to 3 tries.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body"))
		cancel()
		if err == nil {
			break
		}
		if try == 3 || !strings.Contains(err.Error(), "ERR_NETWORK_CHANGED") {
			t.Fatalf("browser: open %s: %v", url, err)
		}
		t.Logf("browser: open %s: %v; loading it again", url, err)
	}
	eval[bool](t, b, `window.notReloaded = true`) // gone if the page reloads
}

// waitForRefresh waits until the page's script has refreshed it n times
// since it was loaded.
func (b *browser) waitForRefresh(t *testing.T, n int) {
	t.Helper()
	testpoll.Until(t, 20*time.Second, fmt.Sprintf("refresh %d of the page", n), func() bool {
		return eval[int](t, b, `Number(document.body.dataset.refreshes || 0)`) >= n
	})
}

// assertNotReloaded fails the test when the page was loaded again since
// open.
func (b *browser) assertNotReloaded(t *testing.T) {
	t.Helper()
	if !eval[bool](t, b, `window.notReloaded === true`) {
		t.Error("the page was reloaded; it should update in place")
	}
}

// assertNoConsoleErrors fails the test for every error or exception the
// pages wrote (a script error, a refused Content-Security-Policy).
func (b *browser) assertNoConsoleErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		t.Errorf("browser console: %s", e)
	}
}

// screenshot writes what the tab shows to file, as PNG.
func (b *browser) screenshot(t *testing.T, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot("body")) // the page's content, not the empty viewport below it
	if err != nil {
		t.Fatalf("browser: screenshot: %v", err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of %s in %s (%d bytes)", eval[string](t, b, `location.href`), file, len(png))
}

// pageText is the text of the page's main part as a reader sees it, but
// for what changes with the clock (ages), so that two renderings of the
// same data compare equal.
const pageText = `(() => {
	const main = document.querySelector('main').cloneNode(true);
	for (const e of main.querySelectorAll('.age')) e.textContent = '';
	for (const e of main.querySelectorAll('[hidden]')) e.remove();
	return Array.from(main.querySelectorAll('h1, p, th, td')).map(e => e.textContent).join('|');
})()`

// pageRow is one controller's row on the list: its cells' text, and its
// class.
type pageRow struct {
	Cells []string `json:"cells"`
	Class string   `json:"class"`
}

// rowCells reads the row of controller id; nil cells when there is none.
func rowCells(t *testing.T, b *browser, id string) (cells []string, class string) {
	t.Helper()
	row := eval[*pageRow](t, b, fmt.Sprintf(`(() => {
		const tr = document.querySelector('#controllers tr[data-id=%q]');
		return tr ? {cells: Array.from(tr.cells, c => c.textContent), class: tr.className} : null;
	})()`, id))
	if row == nil {
		return nil, ""
	}
	return row.Cells, row.Class
}

func TestStatusPageFollowsAScaleWithoutAReload(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	path := requireBrowser(t)
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	web, broken, paused := newID("page-web"), newID("page-broken"), newID("page-paused")
	const secret = "statuspage-secret-env-value"

	rc := controller(web, image, 1, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "TOKEN", Value: secret}}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	brokenRC := controller(broken, "e2e-no-such-image:"+dockertest.RunID(), 1, labels)
	brokenRC.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = api.PullNever // no pull from the internet
	d.rcctl(t, mustJSON(t, brokenRC), "apply", "-f", "-")
	held := controller(paused, image, 1, labels)
	d.rcctl(t, mustJSON(t, held), "apply", "-f", "-")
	waitForReplicas(t, cli, web, 1)
	waitForReplicas(t, cli, paused, 1)
	waitForStatus(t, d, broken, func(st *api.ReplicationControllerStatus) error {
		if c := st.FindCondition(api.ConditionReplicaFailure); c == nil || c.Status != "True" {
			return fmt.Errorf("no ReplicaFailure yet: %+v", st.Conditions)
		}
		return nil
	})
	// a new template, paused: the rollout holds with its container outdated
	held.DesiredState.Paused = true
	held.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "held"}}
	d.rcctl(t, mustJSON(t, held), "apply", "-f", "-")
	for _, id := range []string{web, paused} {
		waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
			if st.ReadyReplicas != 1 {
				return fmt.Errorf("%d ready, want 1", st.ReadyReplicas)
			}
			if c := st.FindCondition(api.ConditionProgressing); id == paused && (c == nil || c.Reason != api.ReasonRollingUpdate) {
				return fmt.Errorf("not rolling: %+v", st.Conditions)
			}
			return nil
		})
	}

	b := newBrowser(t, path)
	base := "http://" + d.metricsAddr

	// The list: the daemon's rendering, then the script's, say the same.
	b.open(t, base+"/")
	rendered := eval[string](t, b, pageText)
	b.waitForRefresh(t, 1)
	if refreshed := eval[string](t, b, pageText); refreshed != rendered {
		t.Errorf("the list as the script shows it:\n%s\nas the daemon rendered it:\n%s", refreshed, rendered)
	}
	if cells, class := rowCells(t, b, broken); class != "state-failing" || !strings.Contains(strings.Join(cells, " "), "ReplicaFailure: CreateFailed") {
		t.Errorf("row of %s: %q %q, want it failing for ReplicaFailure", broken, class, cells)
	}
	if cells, class := rowCells(t, b, paused); class != "state-rolling" || cells[4] != "0" {
		t.Errorf("row of %s: %q %q, want it rolling with 0 up to date", paused, class, cells)
	}

	// A scale shows without a reload: first the desired count, then the
	// containers as they come up.
	start := time.Now()
	d.rcctl(t, "", "scale", web, "--replicas", "3")
	var cells []string
	testpoll.Until(t, 10*time.Second, "DESIRED 3 on the page", func() bool {
		cells, _ = rowCells(t, b, web)
		return len(cells) > 1 && cells[1] == "3"
	})
	t.Logf("the page showed DESIRED 3 %s after rcctl scale began", time.Since(start).Round(time.Millisecond))
	testpoll.Until(t, 90*time.Second, "CURRENT, READY, UP-TO-DATE and AVAILABLE 3 on the page", func() bool {
		cells, _ = rowCells(t, b, web)
		return strings.Join(cells[2:6], " ") == "3 3 3 3"
	})
	t.Logf("the page showed 3 ready %s after rcctl scale began; row %q", time.Since(start).Round(time.Millisecond), cells)
	b.assertNotReloaded(t)
	if file := os.Getenv(screenshotEnv); file != "" {
		b.screenshot(t, file)
	}

	// One controller: the same in both renderings, its containers follow
	// a scale down, and its environment value shows nowhere.
	b.open(t, base+"/controllers/"+web)
	rendered = eval[string](t, b, pageText)
	b.waitForRefresh(t, 1)
	if refreshed := eval[string](t, b, pageText); refreshed != rendered {
		t.Errorf("the page of %s as the script shows it:\n%s\nas the daemon rendered it:\n%s", web, refreshed, rendered)
	}
	containerRows := `document.querySelectorAll('#containers tbody tr').length`
	if n := eval[int](t, b, containerRows); n != 3 {
		t.Errorf("%d containers on the page of %s, want 3", n, web)
	}
	d.rcctl(t, "", "scale", web, "--replicas", "2")
	testpoll.Until(t, 60*time.Second, "2 desired and 2 containers on the page of "+web, func() bool {
		return strings.Contains(eval[string](t, b, pageText), "|Replicas:|2 desired|") && eval[int](t, b, containerRows) == 2
	})
	b.assertNotReloaded(t)
	html := eval[string](t, b, `document.documentElement.outerHTML`)
	if !strings.Contains(html, "TOKEN:") || strings.Contains(html, secret) {
		t.Errorf("the page of %s shows the value of TOKEN, or not its name:\n%s", web, html)
	}
	for _, p := range []string{"/api/v1/controllers", "/api/v1/controllers/" + web} {
		body := httpGet(t, base+p)
		if !json.Valid([]byte(body)) || strings.Contains(body, secret) {
			t.Errorf("%s is not valid JSON, or shows the value of TOKEN:\n%s", p, body)
		}
	}
	b.assertNoConsoleErrors(t)
}

// httpGet returns the body of a GET that answers 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %v:\n%s", url, resp.StatusCode, err, body)
	}
	return string(body)
}
