package registry

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// TestPolicyCarriesEverySecurityField: each field of api.SecurityPolicy,
// alone, survives NewPolicy, the stored form and Security; a field added
// to the api and not here fails.
func TestPolicyCarriesEverySecurityField(t *testing.T) {
	typ := reflect.TypeFor[api.SecurityPolicy]()
	for i := range typ.NumField() {
		var sp api.SecurityPolicy
		reflect.ValueOf(&sp).Elem().Field(i).SetBool(true)
		data, err := EncodePolicy(NewPolicy(sp, 7, "rm-1"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := DecodePolicy(data)
		if err != nil {
			t.Fatalf("%s: decode %s: %v", typ.Field(i).Name, data, err)
		}
		if got := p.Security(); got != sp {
			t.Errorf("%s: published %s, read back %+v, want %+v", typ.Field(i).Name, data, got, sp)
		}
		if p.MaxReplicas != 7 || p.Leader != "rm-1" {
			t.Errorf("%s: maxReplicas %d leader %q, want 7 and rm-1", typ.Field(i).Name, p.MaxReplicas, p.Leader)
		}
	}
}

func TestDecodePolicyIgnoresUnknownFieldsAndRefusesWhatIsAbsent(t *testing.T) {
	p, err := DecodePolicy([]byte(`{"allowHostPorts": true, "allowSomethingNew": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.SecurityPolicy{AllowHostPorts: true}); p.Security() != want || p.MaxReplicas != 0 {
		t.Errorf("decoded %+v, want only host ports allowed and no replica limit", p)
	}
	for _, bad := range []string{`[]`, `{"maxReplicas": -1}`, `{"allowPrivileged": "yes"}`} {
		if _, err := DecodePolicy([]byte(bad)); err == nil {
			t.Errorf("DecodePolicy(%s) succeeded, want an error", bad)
		}
	}
}

// TestPublishPolicyIsGuardedByTheElection: a publish whose guard holds
// writes the policy; one whose guard fails (another manager leads now)
// writes nothing and says ErrNotLeader.
func TestPublishPolicyIsGuardedByTheElection(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := testClient(t)
	store := NewStore(client, "/"+t.Name())
	if _, err := store.GetPolicy(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetPolicy before any publish: %v, want ErrNotFound", err)
	}
	election := store.Prefix() + "/election/leader"
	put, err := client.Put(ctx, election, "rm-1")
	if err != nil {
		t.Fatal(err)
	}
	holds := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(election), "=", put.Header.Revision)}
	lost := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(election), "=", put.Header.Revision+1)}

	first := NewPolicy(api.SecurityPolicy{AllowHostPorts: true}, 50, "rm-1")
	if err := store.PublishPolicy(ctx, holds, first); err != nil {
		t.Fatalf("publish while leading: %v", err)
	}
	stale := NewPolicy(api.AllowAllPolicy(), 100000, "rm-old")
	if err := store.PublishPolicy(ctx, lost, stale); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("publish after the term: %v, want ErrNotLeader", err)
	}
	got, err := store.GetPolicy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != first {
		t.Errorf("stored policy %+v, want the leader's %+v", got, first)
	}

	if _, err := client.Put(ctx, store.PolicyKey(), "not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetPolicy(ctx); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("GetPolicy of a value that does not decode: %v, want an error naming the key", err)
	}
}
