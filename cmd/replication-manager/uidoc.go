package main

// This file is the status page's JSON as the script reads it: each
// document carries, under "page", the strings the daemon's templates
// render (uipage.go, uinodes.go, uievents.go), so that ui/status.js only
// places them. Every document has an ETag over its content but the
// manager's clock, and a request that names it in If-None-Match gets 304:
// a page whose data has not changed costs a round trip, not the document.
// The clock goes in the X-As-Of header, which the script shows.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// listDocument is /api/v1/controllers: ctlview.List, and the list page.
type listDocument struct {
	ctlview.List
	Page listPage `json:"page"`
}

// oneDocument is /api/v1/controllers/<id>: ctlview.One, and the page of
// that controller.
type oneDocument struct {
	ctlview.One
	Page detailPage `json:"page"`
}

// nodesDocument is /api/v1/nodes.
type nodesDocument struct {
	Manager ctlview.Manager `json:"manager"`
	Page    nodesPage       `json:"page"`
}

// eventsDocument is /api/v1/events.
type eventsDocument struct {
	Manager ctlview.Manager `json:"manager"`
	Page    eventsPage      `json:"page"`
}

// asOfHeader carries the manager's clock as the page shows it, on 200 and
// 304 alike.
const asOfHeader = "X-As-Of"

// zeroTimeField is how the manager's clock reads in a document encoded
// with a zero clock. The manager is every document's first field, so the
// first occurrence is its own.
var zeroTimeField = []byte(`"time": "0001-01-01T00:00:00Z"`)

// writeDocument answers with the document build makes for m: 304 when the
// request's If-None-Match names its ETag, else the document with m's
// clock in it. build puts the manager it is given in the document, and
// nothing else that depends on it (the page's strings are made from m
// before, ages included).
func (p *statusPage) writeDocument(w http.ResponseWriter, r *http.Request, m ctlview.Manager, build func(ctlview.Manager) any) {
	zero := m
	zero.Time = time.Time{}
	data, err := ctlview.EncodeJSON(build(zero))
	if err != nil {
		p.logger.Error("status page: encode", "path", r.URL.Path, "err", err)
		http.Error(w, "status page: encode failed", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	jsonHeaders(w)
	w.Header().Set("ETag", etag)
	w.Header().Set(asOfHeader, asOf(m.Time))
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	stamp, err := json.Marshal(m.Time)
	if err != nil {
		http.Error(w, "status page: encode failed", http.StatusInternalServerError)
		return
	}
	data = bytes.Replace(data, zeroTimeField, append([]byte(`"time": `), stamp...), 1)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data) // the client may have gone
}

// jsonHeaders are the headers of every JSON answer. The JSON is not
// HTML-escaped (ctlview.EncodeJSON): the type and nosniff keep a browser
// from reading it as a page. no-cache: a client may keep it, and asks
// again with its ETag.
func jsonHeaders(w http.ResponseWriter) {
	securityHeaders(w)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
}

// etagMatches reports whether an If-None-Match header names etag (or is *).
func etagMatches(header, etag string) bool {
	for _, e := range strings.Split(header, ",") {
		e = strings.TrimPrefix(strings.TrimSpace(e), "W/")
		if e == etag || e == "*" {
			return true
		}
	}
	return false
}
