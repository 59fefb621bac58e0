package etcdembed

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
)

// Client returns a client that calls e's server in this process: each
// request is a function call into etcd's own gRPC handlers, with no
// encoding, HTTP/2 framing or loopback socket between. The daemon's roles
// use it on the etcd they embed; managers on other hosts reach that etcd
// through its client URLs as before. At 10,000 controllers of 10 on 2
// cores, this halved the p99 from a new spec to its first create during a
// mass rollout (docs/BENCHMARKS.md, 8).
//
// The client has no endpoints: it cannot fail over, and it needs none.
// Close it before e.
func Client(e *embed.Etcd) *clientv3.Client {
	c := v3client.New(e.Server)
	kv := adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(e.Server))
	c.KV = messageKV{KV: clientv3.NewKVFromKVClient(kv, c), messages: kv}
	return c
}

// messageKV is the in-process client's KV. It also takes etcd's request
// messages as they are (registry's transactions are built that way), as a
// network client's connection does through clientv3.RetryKVClient.
type messageKV struct {
	clientv3.KV
	messages pb.KVClient
}

// Messages is the KV client of etcd's request messages.
func (k messageKV) Messages() pb.KVClient { return k.messages }
