package bench

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestStartEtcdServesAndCloseRemovesItsData(t *testing.T) {
	s, err := startEtcd()
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(t.Context(), "k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	resp, err := c.Get(t.Context(), "k")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("get k = %v, want v", resp.Kvs)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data dir %s after Close: %v, want it gone", s.dir, err)
	}
}
