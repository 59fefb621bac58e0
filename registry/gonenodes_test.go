package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// TestGoneNodesAreWrittenUnderTheGuardListedAndForgottenOnlyWhenGone: the
// leader's put and delete go through only while its guard holds; rcctl's
// forget removes a record, refuses a node that is registered again, and
// says when there is none.
func TestGoneNodesAreWrittenUnderTheGuardListedAndForgottenOnlyWhenGone(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := testClient(t)
	store := NewStore(client, "/"+t.Name())
	guardKey := store.Prefix() + "/election/replication-manager/1"
	put, err := client.Put(ctx, guardKey, "me")
	if err != nil {
		t.Fatal(err)
	}
	guard := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(guardKey), "=", put.Header.Revision)}
	lost := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(guardKey), "=", 1)}

	since := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	b := &api.GoneNode{Name: "b", GoneSince: since, Containers: []api.GoneContainer{
		{Controller: "web", Slot: 1, Name: "web-1", Image: "demo-task:latest", State: api.StateRunning}}}
	if err := store.PutGoneNode(ctx, lost, b); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("put under a lost guard: %v, want ErrNotLeader", err)
	}
	for _, g := range []*api.GoneNode{b, {Name: "c", GoneSince: since}} {
		if err := store.PutGoneNode(ctx, guard, g); err != nil {
			t.Fatal(err)
		}
	}
	list, err := store.ListGoneNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "b" || len(list[0].Containers) != 1 || list[0].Containers[0].Image != "demo-task:latest" || !list[0].GoneSince.Equal(since) {
		t.Fatalf("listed %+v, want b with its container, then c", list)
	}

	lease, err := store.GrantLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RegisterNode(ctx, &api.Node{Name: "c"}, lease); err != nil {
		t.Fatal(err)
	}
	if err := store.ForgetGoneNode(ctx, "c"); !errors.Is(err, ErrNodeRegistered) {
		t.Errorf("forget a registered node: %v, want ErrNodeRegistered", err)
	}
	if err := store.ForgetGoneNode(ctx, "b"); err != nil {
		t.Errorf("forget b: %v", err)
	}
	if err := store.ForgetGoneNode(ctx, "b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("forget b twice: %v, want ErrNotFound", err)
	}
	if err := store.DeleteGoneNode(ctx, lost, "c"); !errors.Is(err, ErrNotLeader) {
		t.Errorf("delete under a lost guard: %v, want ErrNotLeader", err)
	}
	if err := store.DeleteGoneNode(ctx, guard, "c"); err != nil {
		t.Fatal(err)
	}
	if list, err := store.ListGoneNodes(ctx); err != nil || len(list) != 0 {
		t.Errorf("left: %+v %v, want none", list, err)
	}
}
