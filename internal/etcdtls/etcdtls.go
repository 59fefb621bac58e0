// Package etcdtls holds the checks of TLS to etcd that the daemon and rcctl
// share. Check tells a refused TLS handshake with etcd from an etcd that
// does not answer: the etcd client reports both as a timeout; a direct
// handshake tells them apart, so that both programs can name the TLS flags
// to look at instead of suggesting that etcd is down. CheckPlain refuses TLS
// and auth flags with an endpoint that would be reached without TLS.
package etcdtls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// Check runs one TLS handshake with every https endpoint and returns the
// first one refused, naming the endpoint and the flags to look at. An
// endpoint that does not answer is not an error: that is not a TLS problem.
func Check(ctx context.Context, endpoints []string, cfg *tls.Config, timeout time.Duration) error {
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Scheme != "https" {
			continue
		}
		probeCtx, cancel := context.WithTimeout(ctx, timeout)
		err = probeTLS(probeCtx, u.Host, cfg)
		cancel()
		if err != nil {
			return fmt.Errorf("etcd at %s: TLS handshake failed (see --etcd-cafile, --etcd-certfile, --etcd-keyfile): %w", u.Host, err)
		}
	}
	return nil
}

// tlsRejectWait is how long probeTLS waits, after the handshake, for the
// server to reject the client certificate.
const tlsRejectWait = 500 * time.Millisecond

// probeTLS connects to addr and runs a TLS handshake. It returns only a TLS
// error: an address that does not accept connections, or a probe cut short
// by ctx, is not a TLS problem. With TLS 1.3 the server checks the client
// certificate after the client has finished its side of the handshake, so
// the probe also waits briefly for the server's alert.
func probeTLS(ctx context.Context, addr string, cfg *tls.Config) error {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil
	}
	defer func() { _ = raw.Close() }()
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// etcd's listener reads first, so a server that accepts us stays
	// silent until the deadline; one that rejects us sends an alert.
	if err := raw.SetReadDeadline(time.Now().Add(tlsRejectWait)); err != nil {
		return nil
	}
	var opErr *net.OpError
	if _, err := conn.Read(make([]byte, 1)); errors.As(err, &opErr) && opErr.Op == "remote error" {
		return err
	}
	return nil
}
