package main

// This file serves the nodes view and the event feed (uinodes.go,
// uievents.go), as pages and as JSON.

import (
	"context"
	"net/http"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// clusterOrigin is the origin the nodes view and the event feed carry:
// the page's source's, which says whether this manager leads.
func (p *statusPage) clusterOrigin(ctx context.Context) ctlview.Manager {
	return p.manager(ctx, p.source.Origin())
}

// readNodes reads the nodes; an empty view without a cluster source.
func (p *statusPage) readNodes(ctx context.Context) (nodeData, error) {
	if p.cluster == nil {
		return nodeData{}, nil
	}
	return p.cluster.Nodes(ctx)
}

// readEvents reads the feed's events; none without a cluster source.
func (p *statusPage) readEvents(ctx context.Context) ([]api.Event, error) {
	if p.cluster == nil {
		return nil, nil
	}
	return p.cluster.RecentEvents(ctx, feedEvents)
}

func (p *statusPage) serveNodes(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	m := p.clusterOrigin(ctx)
	d, err := p.readNodes(ctx)
	if err != nil {
		p.failPage(w, r, m, err)
		return
	}
	p.writePage(w, r, http.StatusOK, p.nodes, newNodesPage(m, d))
}

func (p *statusPage) serveNodesJSON(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	m := p.clusterOrigin(ctx)
	d, err := p.readNodes(ctx)
	if err != nil {
		p.failJSON(w, r, err)
		return
	}
	page := newNodesPage(m, d)
	p.writeDocument(w, r, m, func(m ctlview.Manager) any {
		return nodesDocument{Manager: m, Page: page}
	})
}

func (p *statusPage) serveEvents(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	m := p.clusterOrigin(ctx)
	events, err := p.readEvents(ctx)
	if err != nil {
		p.failPage(w, r, m, err)
		return
	}
	p.writePage(w, r, http.StatusOK, p.events, newEventsPage(m, events))
}

func (p *statusPage) serveEventsJSON(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), uiReadTimeout)
	defer cancel()
	m := p.clusterOrigin(ctx)
	events, err := p.readEvents(ctx)
	if err != nil {
		p.failJSON(w, r, err)
		return
	}
	page := newEventsPage(m, events)
	p.writeDocument(w, r, m, func(m ctlview.Manager) any {
		return eventsDocument{Manager: m, Page: page}
	})
}
