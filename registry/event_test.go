package registry

import (
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The watch decoding is tested with hand-made events, as in 2014.

func TestDecodeEventPut(t *testing.T) {
	s := NewStore(nil, "")
	ev := &clientv3.Event{Type: clientv3.EventTypePut, Kv: &mvccpb.KeyValue{
		Key:            []byte("/registry/controllers/web"),
		Value:          []byte(`{"id":"web","desiredState":{"replicas":2,"replicasInSet":{"name":"web"},"taskTemplate":{"labels":{"name":"web"},"desiredState":{"manifest":{"containers":[{"image":"demo-task:latest"}]}}}}}`),
		ModRevision:    42,
		CreateRevision: 7,
	}}
	got := s.DecodeEvent(ev)
	if got.Deleted || got.Spec.ID != "web" || got.Spec.ModRevision != 42 || got.Spec.CreateRevision != 7 {
		t.Fatalf("DecodeEvent = %+v, want a put of web at 42 created at 7", got)
	}
	if got.Spec.Err != nil || got.Spec.Controller == nil || got.Spec.Controller.DesiredState.Replicas != 2 {
		t.Errorf("spec = %+v, err %v; want a decoded spec with 2 replicas", got.Spec.Controller, got.Spec.Err)
	}
}

func TestDecodeEventDeleteNeedsNoValue(t *testing.T) {
	s := NewStore(nil, "/custom")
	ev := &clientv3.Event{Type: clientv3.EventTypeDelete, Kv: &mvccpb.KeyValue{
		Key: []byte("/custom/controllers/web"), ModRevision: 50,
	}}
	got := s.DecodeEvent(ev)
	if !got.Deleted || got.Spec.ID != "web" || got.Spec.ModRevision != 50 {
		t.Errorf("DecodeEvent = %+v, want a delete of web at 50", got)
	}
}

func TestDecodeEventKeepsUndecodableSpecWithError(t *testing.T) {
	s := NewStore(nil, "")
	ev := &clientv3.Event{Type: clientv3.EventTypePut, Kv: &mvccpb.KeyValue{
		Key: []byte("/registry/controllers/web"), Value: []byte(`{"id": "web", "replicas": `), ModRevision: 3,
	}}
	got := s.DecodeEvent(ev)
	if got.Deleted || got.Spec.ID != "web" || got.Spec.Err == nil {
		t.Fatalf("DecodeEvent = %+v, want a put of web with a decode error", got)
	}
	if !strings.Contains(got.Spec.Err.Error(), "decode") {
		t.Errorf("error %q does not say decoding failed", got.Spec.Err)
	}
}
