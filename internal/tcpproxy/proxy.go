// Package tcpproxy is a TCP proxy for partition tests: a client talks to a
// server (on TCP, or on a Unix socket such as a Docker Engine's) through
// it, and the test cuts the link (every open connection at once, and new
// ones refused) and restores it on the same address.
package tcpproxy

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/testpoll"
)

const (
	dialTimeout    = 5 * time.Second
	restoreTimeout = 10 * time.Second
)

// Proxy forwards the connections it accepts on Addr to its target.
type Proxy struct {
	tb testing.TB
	// network and target are where the proxy dials: "tcp" and host:port,
	// or "unix" and a socket's path
	network, target string
	addr            string

	mu     sync.Mutex
	ln     net.Listener // nil while cut or closed
	gen    int          // counts the cuts: a connection accepted before one is closed
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // the accept loop and the connections' goroutines
}

// New starts a proxy to target on a loopback address, closed when the
// test ends. target is host:port, or unix:///path for a Unix socket.
func New(tb testing.TB, target string) *Proxy {
	tb.Helper()
	network := "tcp"
	if path, ok := strings.CutPrefix(target, "unix://"); ok {
		network, target = "unix", path
	}
	ln, err := listenLoopback()
	if err != nil {
		tb.Fatalf("tcpproxy: %v", err)
	}
	p := &Proxy{tb: tb, network: network, target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	tb.Cleanup(p.close)
	return p
}

// listenLoopback listens on a loopback port below Linux's ephemeral range
// (32768 and up), as etcdtest does: a port from there could be taken by an
// outgoing connection while the proxy is cut, and Restore could not have
// it back.
func listenLoopback() (net.Listener, error) {
	for range 50 {
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))); err == nil {
			return ln, nil
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// Addr is the proxy's address, host:port, for the client to dial. It stays
// the same across a Cut and a Restore.
func (p *Proxy) Addr() string { return p.addr }

// Retarget sends the connections accepted from now on to target, a TCP
// host:port: a server restarted elsewhere is where the client's address
// still leads.
func (p *Proxy) Retarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.network, p.target = "tcp", target
}

// Cut closes the listener and every open connection, both ways: the client
// and the target see theirs end at once. New connections are refused until
// Restore. Cutting a cut proxy does nothing.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

func (p *Proxy) cutLocked() {
	p.gen++
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Restore listens again on the same address. Restoring a proxy that is not
// cut does nothing. Like t.Fatal, it must be called from the test's
// goroutine: it fails the test if the address cannot be had back within
// 10s.
func (p *Proxy) Restore() {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil || p.closed {
		return
	}
	var ln net.Listener
	testpoll.Eventually(p.tb, restoreTimeout, func() error {
		var err error
		ln, err = net.Listen("tcp", p.addr)
		return err
	})
	p.serve(ln)
}

// serve accepts on ln until it is closed; p.mu is held or p is not shared
// yet.
func (p *Proxy) serve(ln net.Listener) {
	p.ln = ln
	gen := p.gen
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut or close
			}
			p.wg.Go(func() { p.forward(c, gen) })
		}
	})
}

// forward connects c to the target and copies both ways until either side
// ends or the proxy is cut.
func (p *Proxy) forward(c net.Conn, gen int) {
	p.mu.Lock()
	network, target := p.network, p.target
	p.mu.Unlock()
	up, err := net.DialTimeout(network, target, dialTimeout)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.gen != gen || p.closed { // cut while this one was being accepted
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()

	var copies sync.WaitGroup
	copies.Go(func() { pipe(up, c) })
	copies.Go(func() { pipe(c, up) })
	copies.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
	_ = c.Close()
	_ = up.Close()
}

// pipe copies from src to dst, then passes the end on: a half close when
// src ended cleanly, a full close of both otherwise.
func pipe(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if half, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		_ = half.CloseWrite() // TCP and Unix sockets alike
		return
	}
	_ = dst.Close()
	_ = src.Close()
}

// close is the test's cleanup: it cuts the proxy for good and waits for
// its goroutines.
func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.cutLocked()
	p.mu.Unlock()
	p.wg.Wait()
}
