package certtest

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

func TestFilesMakeAMutualTLSConnectionOnLoopback(t *testing.T) {
	f := New(t)
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(f.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("CA file holds no certificate")
	}
	serverCert, err := tls.LoadX509KeyPair(f.ServerCertFile, f.ServerKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := tls.LoadX509KeyPair(f.ClientCertFile, f.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	peer := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			peer <- err.Error()
			return
		}
		defer func() { _ = conn.Close() }()
		tc := conn.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			peer <- err.Error()
			return
		}
		peer <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
	}()

	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}})
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	defer func() { _ = conn.Close() }()
	if got := <-peer; got != ClientCommonName {
		t.Errorf("server saw client %q, want %q", got, ClientCommonName)
	}
}

func TestEveryCallMakesItsOwnAuthority(t *testing.T) {
	a, b := New(t), New(t)
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(a.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	pair, err := tls.LoadX509KeyPair(b.ServerCertFile, b.ServerKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool}); err == nil {
		t.Error("a server certificate of one call verifies against another call's CA")
	}
}
