package agent

import (
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/registry"
)

// The watch decoding is tested with hand-made events, as in 2014.

func TestDecodeEventPut(t *testing.T) {
	s := registry.NewStore(nil, "")
	got := s.DecodeEvent(registry.KV{
		Key:       "/registry/controllers/web",
		Value:     []byte(`{"id":"web","desiredState":{"replicas":2,"replicasInSet":{"name":"web"},"taskTemplate":{"labels":{"name":"web"},"desiredState":{"manifest":{"containers":[{"image":"demo-task:latest"}]}}}}}`),
		ModRev:    42,
		CreateRev: 7,
	}, false)
	if got.Deleted || got.Spec.ID != "web" || got.Spec.ModRevision != 42 || got.Spec.CreateRevision != 7 {
		t.Fatalf("decodeEvent = %+v, want a put of web at 42 created at 7", got)
	}
	if got.Spec.Err != nil || got.Spec.Controller == nil || got.Spec.Controller.DesiredState.Replicas != 2 {
		t.Errorf("spec = %+v, err %v; want a decoded spec with 2 replicas", got.Spec.Controller, got.Spec.Err)
	}
}

func TestDecodeEventDeleteNeedsNoValue(t *testing.T) {
	s := registry.NewStore(nil, "/custom")
	got := s.DecodeEvent(registry.KV{Key: "/custom/controllers/web", ModRev: 50}, true)
	if !got.Deleted || got.Spec.ID != "web" || got.Spec.ModRevision != 50 {
		t.Errorf("decodeEvent = %+v, want a delete of web at 50", got)
	}
}

func TestDecodeEventKeepsUndecodableSpecWithError(t *testing.T) {
	s := registry.NewStore(nil, "")
	got := s.DecodeEvent(registry.KV{Key: "/registry/controllers/web", Value: []byte(`{"id": "web", "replicas": `), ModRev: 3}, false)
	if got.Deleted || got.Spec.ID != "web" || got.Spec.Err == nil {
		t.Fatalf("decodeEvent = %+v, want a put of web with a decode error", got)
	}
	if !strings.Contains(got.Spec.Err.Error(), "decode") {
		t.Errorf("error %q does not say decoding failed", got.Spec.Err)
	}
}
