package registry

// This file builds the leader's transactions as etcd's own request
// messages. clientv3's Op and Cmp wrappers clone every comparison through
// proto.Clone (by reflection) when it is made, when it goes into an
// OpTxn, when that becomes a request and when Txn.If takes it: four times
// for each of the 100,000 comparisons of a first assignment, about a tenth
// of the leader's CPU then. The messages are what clientv3 would send.

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

func putOp(key string, value []byte) *pb.RequestOp {
	return &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: []byte(key), Value: value}}}
}

func deleteOp(key string) *pb.RequestOp {
	return &pb.RequestOp{Request: &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: &pb.DeleteRangeRequest{Key: []byte(key)}}}
}

func deletePrefixOp(prefix string) *pb.RequestOp {
	return &pb.RequestOp{Request: &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: &pb.DeleteRangeRequest{
		Key: []byte(prefix), RangeEnd: []byte(clientv3.GetPrefixRangeEnd(prefix))}}}
}

func txnOp(cmps []*pb.Compare, then ...*pb.RequestOp) *pb.RequestOp {
	return &pb.RequestOp{Request: &pb.RequestOp_RequestTxn{RequestTxn: &pb.TxnRequest{Compare: cmps, Success: then}}}
}

// modRevisionIs compares key's ModRevision with rev (0: no key).
func modRevisionIs(key string, rev int64) *pb.Compare {
	return &pb.Compare{Key: []byte(key), Target: pb.Compare_MOD, Result: pb.Compare_EQUAL,
		TargetUnion: &pb.Compare_ModRevision{ModRevision: rev}}
}

// absent compares key's CreateRevision with 0: the key does not exist.
func absent(key string) *pb.Compare {
	return &pb.Compare{Key: []byte(key), Target: pb.Compare_CREATE, Result: pb.Compare_EQUAL,
		TargetUnion: &pb.Compare_CreateRevision{CreateRevision: 0}}
}

// compares returns the messages of cmps, shared, not copied: they are
// only read from here on.
func compares(cmps []clientv3.Cmp) []*pb.Compare {
	out := make([]*pb.Compare, len(cmps))
	for i := range cmps {
		out[i] = cmps[i].GetCompare()
	}
	return out
}

// commitTxn sends req as clientv3's KV would: through the client's
// connection, its retry of what is safe to retry and its auth token,
// waiting for a connection that is not ready yet, and with errors as
// clientv3 returns them.
func (s *Store) commitTxn(ctx context.Context, req *pb.TxnRequest) (*pb.TxnResponse, error) {
	resp, err := s.kv.Txn(ctx, req, grpc.WaitForReady(true))
	if err != nil {
		return nil, clientv3.ContextError(ctx, err)
	}
	return resp, nil
}
