package etcdtest

import (
	"net"
	"net/url"
	"testing"

	"go.etcd.io/etcd/server/v3/embed"
)

// TestFreeAddrHandsOutEachAddressOnce: a test that draws the ports of a
// daemon's servers before it starts any of them must get different ones,
// though each was free when drawn.
func TestFreeAddrHandsOutEachAddressOnce(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		addr := FreeAddr(t)
		if seen[addr] {
			t.Fatalf("FreeAddr handed out %s twice", addr)
		}
		seen[addr] = true
	}
}

// TestNewDrawsPortsAgainWhenOneWasTakenMeanwhile: another process may
// bind a port between its draw and etcd's listen; New then draws again.
func TestNewDrawsPortsAgainWhenOneWasTakenMeanwhile(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenURL := url.URL{Scheme: "http", Host: taken.Addr().String()}
	tries := 0
	s, err := New(t.TempDir(), func(cfg *embed.Config) {
		tries++
		if tries == 1 { // the first draw: the port is someone else's by now
			cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{takenURL}, []url.URL{takenURL}
		}
	})
	if err != nil {
		t.Fatalf("New with the first client port taken: %v", err)
	}
	defer s.Close()
	if tries != 2 || s.ClientURL == takenURL.String() {
		t.Fatalf("New tried %d times and serves on %s, want a second draw off the taken %s", tries, s.ClientURL, takenURL.String())
	}
}
