package main

// This file is the status page's event feed, /events: the newest events
// over every controller, newest first, each with its controller.

import (
	"fmt"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// feedEvents is how many events the feed shows.
const feedEvents = 100

// eventsPage is /events.
type eventsPage struct {
	head
	Summary string `json:"summary"`
	Events  table  `json:"events"`
}

func newEventsPage(m ctlview.Manager, events []api.Event) eventsPage {
	page := eventsPage{head: newHead("events", m),
		Events: table{Header: []string{"AGE", "CONTROLLER", "TYPE", "REASON", "MESSAGE"}, Empty: "No events."}}
	warnings := 0
	for _, ev := range events {
		class := ""
		if ev.Type == api.EventWarning {
			class = "warning"
			warnings++
		}
		page.Events.Rows = append(page.Events.Rows, tableRow{Key: ev.Controller, Class: class, Cells: []cell{
			{Text: ctlview.Age(m.Time, ev.Time), Class: "age"}, {Text: ev.Controller}, {Text: ev.Type}, {Text: ev.Reason},
			{Text: ctlview.OneLineString(ev.Message)},
		}})
	}
	page.Summary = fmt.Sprintf("the newest %d events over every controller, newest first; %d warnings", len(events), warnings)
	if len(events) < feedEvents {
		page.Summary = fmt.Sprintf("%d events over every controller, newest first; %d warnings", len(events), warnings)
	}
	return page
}
