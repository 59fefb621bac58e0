package etcdembed_test

import (
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/internal/etcdembed"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

// The in-process client does what the roles ask of etcd, with no
// endpoint to reach: reads, guarded writes, etcd's own request messages,
// watches and leases. What it writes a network client reads.
func TestTheInProcessClientServesTheRolesWithoutAnEndpoint(t *testing.T) {
	srv := etcdtest.Start(t)
	c := etcdembed.Client(srv.Etcd)
	t.Cleanup(func() { _ = c.Close() })
	if eps := c.Endpoints(); len(eps) != 0 {
		t.Fatalf("endpoints %v: the client should call the server in process", eps)
	}
	ctx := t.Context()

	watch := c.Watch(ctx, "/k/", clientv3.WithPrefix())
	lease, err := c.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision("/k/a"), "=", 0)).
		Then(clientv3.OpPut("/k/a", "1", clientv3.WithLease(lease.ID))).Commit()
	if err != nil || !resp.Succeeded {
		t.Fatalf("guarded put: %v, succeeded %v", err, resp != nil && resp.Succeeded)
	}
	messages, ok := c.KV.(interface{ Messages() pb.KVClient })
	if !ok {
		t.Fatal("the client's KV does not take etcd's request messages")
	}
	put := &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: []byte("/k/b"), Value: []byte("2")}}}
	if _, err := messages.Messages().Txn(ctx, &pb.TxnRequest{Success: []*pb.RequestOp{put}}); err != nil {
		t.Fatal(err)
	}

	seen := map[string]string{}
	timeout := time.After(10 * time.Second)
	for len(seen) < 2 {
		select {
		case wr := <-watch:
			for _, ev := range wr.Events {
				seen[string(ev.Kv.Key)] = string(ev.Kv.Value)
			}
		case <-timeout:
			t.Fatalf("the watch saw %v, want both puts", seen)
		}
	}
	got, err := srv.Client(t).Get(ctx, "/k/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 2 || got.Kvs[0].Lease != int64(lease.ID) {
		t.Errorf("a network client reads %v, want /k/a under lease %x and /k/b", got.Kvs, lease.ID)
	}
}
