package e2e

// The status page's views beyond the list, in the real browser: a
// container removed by hand shows its controller degraded, never rolling;
// the filter box hides what does not match; the nodes view (a cordoned
// node included) and the event feed follow the daemon; the page is dark when the reader's system
// prefers it; and a hidden tab does not poll.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// darkScreenshotEnv names a PNG file for the test to write the list page
// in dark mode to (docs/status-page-dark.png is made so).
const darkScreenshotEnv = "STATUS_PAGE_DARK_SCREENSHOT"

// prefersDark makes the tab's pages see prefers-color-scheme: dark.
func prefersDark(dark bool) chromedp.Action[chromedp.Void] {
	value := "light"
	if dark {
		value = "dark"
	}
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		})
		return err
	})
}

// visibleRows are the ids (data-id or data-key) of the rows of the table
// under sel that the filter leaves shown.
func visibleRows(t *testing.T, b *browser, sel string) []string {
	t.Helper()
	return eval[[]string](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(tr => !tr.hidden).map(tr => tr.dataset.id || tr.dataset.key)`, sel+" tbody tr"))
}

func TestStatusPageShowsAReplacementAsDegradedAndHasNodesFilterAndDarkMode(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	path := requireBrowser(t)
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	repl, other := newID("views-repl"), newID("views-other")

	// minReadySeconds keeps a replacement unavailable long enough to be seen
	rc := controller(repl, image, 2, labels)
	rc.DesiredState.MinReadySeconds = 8
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	d.rcctl(t, controllerJSON(t, other, image, 1, labels), "apply", "-f", "-")
	running := waitForReplicas(t, cli, repl, 2)
	waitForReplicas(t, cli, other, 1)
	waitForStatus(t, d, repl, func(st *api.ReplicationControllerStatus) error {
		if st.AvailableReplicas != 2 {
			return fmt.Errorf("%d available, want 2", st.AvailableReplicas)
		}
		return nil
	})

	b := newBrowser(t, path)
	base := "http://" + d.metricsAddr
	b.open(t, base+"/")
	b.waitForRefresh(t, 1)
	if cells, class := rowCells(t, b, repl); class != "state-ok" {
		t.Fatalf("row of %s: %q %q, want ok before the removal", repl, class, cells)
	}

	// The filter: typed, it hides every row that does not match, and says
	// so when none does; it holds over the script's refreshes.
	b.do(t, "type in the filter", chromedp.SendKeys("#filter", "views-repl"))
	if rows := visibleRows(t, b, "#controllers"); len(rows) != 1 || rows[0] != repl {
		t.Errorf("rows shown with the filter views-repl: %q, want only %s", rows, repl)
	}
	n := eval[int](t, b, `Number(document.body.dataset.refreshes)`)
	b.waitForRefresh(t, n+2)
	if rows := visibleRows(t, b, "#controllers"); len(rows) != 1 || rows[0] != repl {
		t.Errorf("rows shown with the filter after two refreshes: %q, want only %s", rows, repl)
	}
	b.do(t, "type more in the filter", chromedp.SendKeys("#filter", "-nothing-matches"))
	if rows := visibleRows(t, b, "#controllers"); len(rows) != 0 || !eval[bool](t, b, `!document.getElementById('nomatch').hidden`) {
		t.Errorf("rows shown with a filter nothing matches: %q, or no word that none does", rows)
	}
	eval[bool](t, b, `(() => { const f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input')); return true; })()`)
	if rows := visibleRows(t, b, "#controllers"); len(rows) < 2 {
		t.Errorf("rows shown with the filter cleared: %q, want every controller", rows)
	}

	// A container removed behind the manager's back is replaced; until the
	// replacement is available the controller is degraded, never rolling.
	if err := cli.ContainerRemove(t.Context(), running[repl+"-1"].ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	var states []string
	testpoll.Until(t, 60*time.Second, repl+" degraded and then ok again", func() bool {
		cells, class := rowCells(t, b, repl)
		if len(states) == 0 || states[len(states)-1] != class {
			states = append(states, class)
			t.Logf("row of %s: %s %q", repl, class, cells)
		}
		return class == "state-ok" && strings.Contains(strings.Join(states, " "), "state-degraded")
	})
	for _, s := range states {
		if s == "state-rolling" {
			t.Errorf("the row of %s went through %q; a replacement is no rollout", repl, states)
		}
	}
	b.assertNotReloaded(t)

	// The nodes view: this engine, Ready, with its capacity, the leader's
	// reservations, what is free, its containers and its lease, and no
	// gone node; the same after the script's refresh.
	b.open(t, base+"/nodes")
	rendered := eval[string](t, b, pageText)
	b.waitForRefresh(t, 1)
	if refreshed := eval[string](t, b, pageText); refreshed != rendered {
		t.Errorf("the nodes as the script shows them:\n%s\nas the daemon rendered them:\n%s", refreshed, rendered)
	}
	node := eval[[]string](t, b, `Array.from(document.querySelectorAll('#nodes tbody tr:first-child td'), td => td.textContent)`)
	if len(node) != 13 || node[1] != "Ready" || node[3] == "<unknown>" || node[5] == "<leader only>" ||
		node[7] == "<leader only>" || node[7] == "<unknown>" || node[8] == "<leader only>" || node[8] == "<unknown>" ||
		node[10] == "0" || !strings.Contains(node[11], "left)") {
		t.Errorf("the node's row: %q; want it Ready with its CPUs, reserved and free CPU and memory, containers and lease", node)
	}
	if gone := eval[string](t, b, `document.getElementById('gone').textContent`); gone != "No node is gone." {
		t.Errorf("the gone nodes with none gone: %q", gone)
	}
	// cordoned, the node is Ready,Paused once the script refreshes
	d.rcctl(t, "", "cordon", node[0])
	testpoll.Until(t, 20*time.Second, "the nodes view shows the node paused", func() bool {
		return eval[string](t, b, `document.querySelector('#nodes tbody tr:first-child td:nth-child(2)').textContent`) == "Ready,Paused"
	})
	d.rcctl(t, "", "uncordon", node[0])
	b.do(t, "filter the nodes", chromedp.SendKeys("#filter", "no-such-node"))
	if rows := visibleRows(t, b, "#nodes"); len(rows) != 0 {
		t.Errorf("nodes shown with the filter no-such-node: %q", rows)
	}

	// The event feed: every controller's, the replacement among them.
	b.open(t, base+"/events")
	b.waitForRefresh(t, 1)
	if feed := eval[string](t, b, `document.getElementById('events').textContent`); !strings.Contains(feed, repl) || !strings.Contains(feed, other) {
		t.Errorf("the event feed lacks %s or %s:\n%s", repl, other, feed)
	}

	// Dark mode: the reader's system prefers it, the page follows.
	b.do(t, "prefer dark", prefersDark(true))
	b.open(t, base+"/")
	b.waitForRefresh(t, 1)
	if bg := eval[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(13, 17, 23)" {
		t.Errorf("body background in dark mode %q, want rgb(13, 17, 23)", bg)
	}
	if file := os.Getenv(darkScreenshotEnv); file != "" {
		b.screenshot(t, file)
	}
	b.do(t, "prefer light", prefersDark(false))
	if bg := eval[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(255, 255, 255)" {
		t.Errorf("body background in light mode %q, want rgb(255, 255, 255)", bg)
	}

	// A hidden tab does not poll; shown again, it polls at once.
	eval[bool](t, b, `(() => {
		Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
		document.dispatchEvent(new Event('visibilitychange'));
		return true;
	})()`)
	time.Sleep(500 * time.Millisecond) // a poll under way when the tab hid ends
	before := eval[int](t, b, `Number(document.body.dataset.refreshes)`)
	time.Sleep(4 * time.Second)
	if after := eval[int](t, b, `Number(document.body.dataset.refreshes)`); after != before {
		t.Errorf("the hidden tab refreshed %d times in 4s, want none", after-before)
	}
	eval[bool](t, b, `(() => {
		Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});
		document.dispatchEvent(new Event('visibilitychange'));
		return true;
	})()`)
	start := time.Now()
	b.waitForRefresh(t, before+1)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the tab shown again refreshed %s later, want at once", took)
	}
	// The script asks with the ETag it was given, and a 304 leaves the
	// page as it is. (While a controller is under two minutes old its age
	// changes every second, and so does the ETag: the 304 is the daemon's
	// answer to a page of older ones, which the unit tests check; here a
	// stand-in fetch gives it.)
	eval[bool](t, b, `(() => {
		window.sentETags = [];
		const real = window.fetch;
		window.fetch = async (url, init) => {
			const tag = init.headers['If-None-Match'] || '';
			window.sentETags.push(tag);
			if (tag) return new Response(null, {status: 304, headers: {'X-As-Of': 'test'}});
			return real(url, init);
		};
		return true;
	})()`)
	rendered = eval[string](t, b, pageText)
	testpoll.Until(t, 20*time.Second, "a 304", func() bool {
		return eval[int](t, b, `Number(document.body.dataset.notModified || 0)`) > 0
	})
	if sent := eval[[]string](t, b, `window.sentETags`); len(sent) == 0 || !strings.HasPrefix(sent[0], "\"") {
		t.Errorf("the script sent If-None-Match %q, want the last ETag", sent)
	}
	if after := eval[string](t, b, pageText); after != rendered {
		t.Errorf("the page after a 304:\n%s\nbefore:\n%s", after, rendered)
	}
	if live := eval[string](t, b, `document.getElementById('live').textContent`); live != "live, as of test" {
		t.Errorf("the live mark after a 304: %q, want the X-As-Of of the answer", live)
	}
	b.assertNoConsoleErrors(t)
}
