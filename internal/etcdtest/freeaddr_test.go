package etcdtest

import "testing"

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
