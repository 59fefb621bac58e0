package etcdembed_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
)

// TestTheEmbeddedEtcdSnapshotsEveryThousandWrites: a snapshot is what
// lets etcd drop the raft entries it keeps in memory. With etcd's default
// (10,000) none would be taken yet.
func TestTheEmbeddedEtcdSnapshotsEveryThousandWrites(t *testing.T) {
	dir := t.TempDir()
	srv, err := etcdtest.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := srv.Client(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := range 80 {
				if _, err := client.Put(t.Context(), fmt.Sprintf("/k/%d/%d", w, i), "v"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	snaps, err := filepath.Glob(filepath.Join(dir, "member", "snap", "*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 {
		entries, _ := os.ReadDir(filepath.Join(dir, "member", "snap"))
		t.Fatalf("no snapshot after 1,280 writes; member/snap holds %v", entries)
	}
}
