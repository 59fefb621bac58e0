package tcpproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/tcpproxy"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// echoServer echoes every line back on every connection, and counts the
// connections it has open.
type echoServer struct {
	ln   net.Listener
	open atomic.Int32
	wg   sync.WaitGroup
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	return startEchoOn(t, "tcp", "127.0.0.1:0")
}

func startEchoOn(t *testing.T, network, addr string) *echoServer {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.open.Add(1)
			s.wg.Go(func() {
				defer s.open.Add(-1)
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

// echo sends a line on c and returns what comes back.
func echo(c net.Conn, line string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustEcho(t *testing.T, c net.Conn, line string) {
	t.Helper()
	got, err := echo(c, line)
	if err != nil || got != line {
		t.Fatalf("echo %q: got %q, %v", line, got, err)
	}
}

func TestProxyForwardsCutsAndRestores(t *testing.T) {
	srv := startEcho(t)
	p := tcpproxy.New(t, srv.ln.Addr().String())
	addr := p.Addr()

	open := dial(t, addr)
	mustEcho(t, open, "hello")
	mustEcho(t, dial(t, addr), "second connection")
	if n := srv.open.Load(); n != 2 {
		t.Errorf("the server has %d connections open, want 2", n)
	}

	p.Cut()
	// the open connection is cut off at once, not after a timeout
	start := time.Now()
	_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := open.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("read on a connection open across the cut: %d bytes, %v; want it closed at once", n, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the cut took %s to reach the client", d)
	}
	// and so is the server's end
	testpoll.Until(t, 5*time.Second, "the server's connections to close", func() bool { return srv.open.Load() == 0 })
	// new connections are refused
	if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
		c.Close()
		t.Fatal("dial after the cut succeeded, want it refused")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after the cut: %v, want connection refused", err)
	}
	p.Cut() // a second cut does nothing

	p.Restore()
	if p.Addr() != addr {
		t.Errorf("Addr after Restore: %s, want %s", p.Addr(), addr)
	}
	mustEcho(t, dial(t, addr), "after the restore")
	p.Restore() // restoring a restored proxy does nothing
	mustEcho(t, dial(t, addr), "still")
}

// A Unix socket's server (a Docker Engine's) is reached over TCP through
// the proxy, and cut like any other.
func TestProxyForwardsToAUnixSocket(t *testing.T) {
	srv := startEchoOn(t, "unix", filepath.Join(t.TempDir(), "echo.sock"))
	p := tcpproxy.New(t, "unix://"+srv.ln.Addr().String())
	open := dial(t, p.Addr())
	mustEcho(t, open, "over a unix socket")

	p.Cut()
	_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := open.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("read on a connection open across the cut: %d bytes, %v; want it closed at once", n, err)
	}
	testpoll.Until(t, 5*time.Second, "the server's connections to close", func() bool { return srv.open.Load() == 0 })
	p.Restore()
	mustEcho(t, dial(t, p.Addr()), "after the restore")
}

func TestProxyPassesAHalfClose(t *testing.T) {
	srv := startEcho(t)
	p := tcpproxy.New(t, srv.ln.Addr().String())
	c := dial(t, p.Addr())
	if _, err := io.WriteString(c, "all of it"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "all of it" {
		t.Errorf("after a half close: read %q, %v; want the echo, then EOF", got, err)
	}
}

func TestProxyRefusesWhenTheTargetIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close()
	p := tcpproxy.New(t, target)
	c := dial(t, p.Addr())
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("read through a proxy to nothing: %v, want the connection closed", err)
	}
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func TestNoConnectionSurvivesACutUnderLoad(t *testing.T) {
	srv := startEcho(t)
	p := tcpproxy.New(t, srv.ln.Addr().String())
	stop := make(chan struct{})
	var clients sync.WaitGroup
	var echoed atomic.Int32
	// the clients' connections stay open until the test ends: only a cut
	// closes the server's ends
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range 4 {
		clients.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
				if err != nil {
					continue
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				if _, err := echo(c, "x"); err == nil {
					echoed.Add(1)
				}
			}
		})
	}
	for range 20 {
		time.Sleep(5 * time.Millisecond)
		p.Cut()
		p.Restore()
	}
	p.Cut()
	close(stop)
	clients.Wait()
	if echoed.Load() == 0 {
		t.Fatal("no echo went through: the test tested nothing")
	}
	testpoll.Until(t, 5*time.Second, "every server connection to close after the last cut", func() bool { return srv.open.Load() == 0 })
}

// A retargeted proxy sends its new connections to the new target, at the
// same address; the connections it has go on where they were.
func TestARetargetedProxySendsNewConnectionsToTheNewTarget(t *testing.T) {
	first, second := startEcho(t), startEcho(t)
	p := tcpproxy.New(t, first.ln.Addr().String())
	before, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	testpoll.Until(t, 5*time.Second, "the first connection at the first target", func() bool { return first.open.Load() == 1 })

	p.Retarget(second.ln.Addr().String())
	after, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	testpoll.Until(t, 5*time.Second, "the new connection at the second target", func() bool { return second.open.Load() == 1 })
	if n := first.open.Load(); n != 1 {
		t.Errorf("%d connections at the first target, want the first one still", n)
	}
}
