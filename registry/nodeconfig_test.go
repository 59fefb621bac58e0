package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// TestNodeConfigsAreReadChangedWithoutLosingAWriteAndListed: a node
// without a config is active; a write over a changed config is refused;
// an update applies to what is there; an invalid config is never written.
func TestNodeConfigsAreReadChangedWithoutLosingAWriteAndListed(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := NewStore(testClient(t), "/"+t.Name())

	c, rev, err := store.GetNodeConfig(ctx, "a")
	if err != nil || rev != 0 || c.Effective() != api.NodeActive {
		t.Fatalf("no config: %+v rev %d, %v", c, rev, err)
	}
	if err := store.PutNodeConfig(ctx, "a", api.NodeConfig{Availability: api.NodePause}, 0); err != nil {
		t.Fatal(err)
	}
	if err := store.PutNodeConfig(ctx, "a", api.NodeConfig{}, 0); !errors.Is(err, ErrNodeConfigChanged) {
		t.Fatalf("a write over a changed config: %v, want ErrNodeConfigChanged", err)
	}
	if err := store.PutNodeConfig(ctx, "a", api.NodeConfig{Availability: "off"}, 0); err == nil {
		t.Fatal("an invalid availability was written")
	}
	got, err := store.UpdateNodeConfig(ctx, "a", func(c *api.NodeConfig) error {
		c.Labels = map[string]string{"zone": "c"}
		return nil
	})
	if err != nil || got.Availability != api.NodePause || got.Labels["zone"] != "c" {
		t.Fatalf("update: %+v, %v", got, err)
	}
	all, err := store.ListNodeConfigs(ctx)
	if err != nil || len(all) != 1 || all["a"].Labels["zone"] != "c" {
		t.Fatalf("list: %v, %v", all, err)
	}
}
