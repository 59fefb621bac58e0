package main

// A refused connection is known at once: the etcd client does not say so,
// it retries until the dial timeout and reports a timeout. So before the
// client connects, rcctl dials every endpoint's TCP address once, all at
// the same time; when every one of them refuses the connection, nothing
// listens there and rcctl says so without waiting. An endpoint that
// accepts, or does not answer within the probe's time, is left to the
// client and its timeout, as is a unix socket.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// refusedProbeTimeout bounds the probe of one endpoint; a refusal comes
// back in well under it.
const refusedProbeTimeout = time.Second

// allRefuse reports whether every endpoint refused a TCP connection. It
// is false when any endpoint accepted, timed out, or is not a TCP address.
func allRefuse(ctx context.Context, endpoints []string, timeout time.Duration) bool {
	timeout = min(timeout, refusedProbeTimeout)
	results := make(chan bool, len(endpoints))
	for _, ep := range endpoints {
		go func() { results <- refuses(ctx, ep, timeout) }()
	}
	all := true
	for range endpoints {
		if !<-results {
			all = false
		}
	}
	return all
}

// refuses reports whether the host:port of the http or https endpoint ep
// refused a TCP connection.
func refuses(ctx context.Context, ep string, timeout time.Duration) bool {
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED)
	}
	_ = conn.Close()
	return false
}

// refused is the error for endpoints that all refused the connection.
func (cn *conn) refused() error {
	return fmt.Errorf("etcd at %s refused the connection (is the replication manager running? see --etcd-servers)", cn.servers)
}
