package main

// get --watch: the list as get prints it, then one line (a table row, a
// name, or a document) per change of a listed controller's spec or status,
// as kubectl get --watch prints them, until interrupted. It watches the
// spec and status prefixes from the revision read before the list, so no
// change is missed; on each event it reads the controller again and prints
// its line if it differs from the one last printed for it. A controller
// deleted, or whose labels no longer match -l, prints its last line once.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// watcher is the state of one get --watch.
type watcher struct {
	c    *cli
	cn   *conn
	id   string // the one controller watched, or "" for every one
	opts getOptions
	// last is the view each listed controller was last printed from, and
	// printed what was printed for it.
	last    map[string]view
	printed map[string]string
	// widths are the table's column widths so far, so that rows printed
	// one by one line up with the header.
	widths []int
}

func (c *cli) watch(ctx context.Context, cn *conn, id string, opts getOptions, views []view, rev int64) error {
	w := &watcher{c: c, cn: cn, id: id, opts: opts, last: map[string]view{}, printed: map[string]string{}}
	if err := w.printInitial(ctx, views); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	specs := cn.client.Watch(wctx, cn.store.ControllersPrefix(), clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	statuses := cn.client.Watch(wctx, cn.store.StatusPrefix(), clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case resp, ok = <-specs:
		case resp, ok = <-statuses:
		}
		if ctx.Err() != nil {
			return nil // interrupted: the watch is done
		}
		if !ok {
			return fmt.Errorf("watch of etcd at %s ended", cn.servers)
		}
		if err := resp.Err(); err != nil {
			return cn.explain(fmt.Errorf("watch of etcd at %s: %w", cn.servers, err))
		}
		for _, ev := range resp.Events {
			changed, ok := w.idOf(string(ev.Kv.Key))
			if !ok || (w.id != "" && changed != w.id) {
				continue
			}
			if err := w.changed(ctx, changed); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// idOf is the controller a spec or status key is of.
func (w *watcher) idOf(key string) (string, bool) {
	if w.cn.store.IsControllerKey(key) {
		return strings.TrimPrefix(key, w.cn.store.ControllersPrefix()), true
	}
	id, ok := strings.CutPrefix(key, w.cn.store.StatusPrefix())
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// printInitial prints the list: the table with its header, or a line or
// a document per controller.
func (w *watcher) printInitial(ctx context.Context, views []view) error {
	if !w.opts.out.document() && w.opts.out.format != outputName {
		if len(views) == 0 {
			fmt.Fprintln(w.c.stderr, "No controllers found.")
		}
		header := tableHeader(w.opts.out.format == outputWide)
		rows := [][]string{header}
		nodes, err := w.c.readNodesColumn(ctx, w.cn, w.id, w.opts.out.format == outputWide)
		if err != nil {
			return err
		}
		for _, v := range views {
			rows = append(rows, w.c.tableRow(v, w.opts.out.format == outputWide, nodes))
		}
		for _, r := range rows {
			w.grow(r)
		}
		// STATUS changes most: room for its usual words from the start
		// (a longer one later pushes the rest of its row right)
		if i := slices.Index(header, "STATUS"); i >= 0 {
			w.widths[i] = max(w.widths[i], len(ctlview.StatusProgressing))
		}
		fmt.Fprint(w.c.stdout, w.format(header))
		for i, v := range views {
			w.last[v.spec.ID], w.printed[v.spec.ID] = v, w.format(rows[i+1])
			fmt.Fprint(w.c.stdout, w.printed[v.spec.ID])
		}
		return nil
	}
	for _, v := range views {
		line, err := w.line(ctx, v)
		if err != nil {
			return err
		}
		w.last[v.spec.ID], w.printed[v.spec.ID] = v, line
		fmt.Fprint(w.c.stdout, line)
	}
	return nil
}

// changed reads controller id again and prints its line when it changed.
func (w *watcher) changed(ctx context.Context, id string) error {
	v, err := readView(ctx, w.cn, id)
	gone := errors.Is(err, registry.ErrNotFound)
	switch {
	case err != nil && !gone:
		return err
	case !gone && w.id == "" && !w.opts.sel.matches(v.spec.Controller):
		gone = true // no longer selected
	}
	if gone {
		last, ok := w.last[id]
		if !ok {
			return nil
		}
		delete(w.last, id)
		delete(w.printed, id)
		line, err := w.line(ctx, last)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w.c.stdout, line)
		return err
	}
	line, err := w.line(ctx, v)
	if err != nil {
		return err
	}
	w.last[id] = v
	if w.printed[id] == line {
		return nil
	}
	w.printed[id] = line
	_, err = io.WriteString(w.c.stdout, line)
	return err
}

// line is what the watch prints for v: a table row, a name, or a
// document (YAML documents start with ---, so that the stream splits).
func (w *watcher) line(ctx context.Context, v view) (string, error) {
	out := w.opts.out
	switch {
	case out.format == outputName:
		return controllerName(v.spec.ID) + "\n", nil
	case out.document():
		doc, err := viewDocument(v)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		if out.format == outputYAML {
			b.WriteString("---\n")
		}
		if err := out.writeDocument(&b, doc); err != nil { // jsonpath's ends a line per change
			return "", err
		}
		return b.String(), nil
	}
	wide := out.format == outputWide
	nodes, err := w.c.readNodesColumn(ctx, w.cn, v.spec.ID, wide)
	if err != nil {
		return "", err
	}
	cells := w.c.tableRow(v, wide, nodes)
	w.grow(cells)
	return w.format(cells), nil
}

// grow widens the columns to hold cells.
func (w *watcher) grow(cells []string) {
	for i, cell := range cells {
		if i == len(w.widths) {
			w.widths = append(w.widths, 0)
		}
		w.widths[i] = max(w.widths[i], utf8.RuneCountInString(cell))
	}
}

// format lays out a row as the table's tabwriter does: each cell but the
// last padded to its column's width and three spaces.
func (w *watcher) format(cells []string) string {
	var b strings.Builder
	for i, cell := range cells {
		b.WriteString(cell)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", w.widths[i]-utf8.RuneCountInString(cell)+3))
		}
	}
	b.WriteString("\n")
	return b.String()
}
