package agent

import (
	"sync"

	"github.com/replication-manager/replication-manager/registry"
)

// specCache holds the newest spec revision seen for every controller, fed by
// the list and the watch. It is what makes the 2014 TODO about versions
// moot: a sync always reads the newest spec seen, and an older revision
// never replaces a newer one, whatever order updates arrive in.
//
// It does not talk to etcd; the watch loop is its only writer.
type specCache struct {
	mu    sync.RWMutex
	specs map[string]registry.Spec
	// deleted holds the revision at which a controller was deleted, so that
	// a stale put older than the delete cannot bring it back, and so that
	// the sync knows the controller existed. A full list keeps only the
	// deletions it saw.
	deleted map[string]int64
	// listed is true once a full list has been applied: before that, an
	// unknown controller is not yet known to be deleted. listedCh is
	// closed at the same moment.
	listed   bool
	listedCh chan struct{}
}

func newSpecCache() *specCache {
	return &specCache{specs: make(map[string]registry.Spec), deleted: make(map[string]int64), listedCh: make(chan struct{})}
}

// put records spec unless the cache already holds the same or a newer
// revision of it (or a newer delete). It reports whether anything changed.
func (c *specCache) put(spec registry.Spec) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.specs[spec.ID]; ok && cur.ModRevision >= spec.ModRevision {
		return false
	}
	if rev, ok := c.deleted[spec.ID]; ok && rev >= spec.ModRevision {
		return false
	}
	delete(c.deleted, spec.ID)
	c.specs[spec.ID] = spec
	return true
}

// remove records that id was deleted at revision rev, unless the cache holds
// a newer spec. It reports whether anything changed.
func (c *specCache) remove(id string, rev int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.specs[id]; ok && cur.ModRevision > rev {
		return false
	}
	if old, ok := c.deleted[id]; ok && old >= rev {
		return false
	}
	delete(c.specs, id)
	c.deleted[id] = rev
	return true
}

// replace applies a full list read at revision rev and returns the ids whose
// spec changed or disappeared. Entries newer than the list are kept: they
// came from a watch event that overtook it.
func (c *specCache) replace(specs []registry.Spec, rev int64) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var changed []string
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		seen[s.ID] = true
		if cur, ok := c.specs[s.ID]; ok && cur.ModRevision >= s.ModRevision {
			continue
		}
		c.specs[s.ID] = s
		changed = append(changed, s.ID)
	}
	c.deleted = make(map[string]int64)
	for id, cur := range c.specs {
		if !seen[id] && cur.ModRevision <= rev {
			delete(c.specs, id)
			c.deleted[id] = rev
			changed = append(changed, id)
		}
	}
	if !c.listed {
		c.listed = true
		close(c.listedCh)
	}
	return changed
}

// forget drops the tombstone of a deleted controller whose containers are
// gone, so that deletions do not pile up between full lists.
func (c *specCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.deleted, id)
}

// get returns the newest spec of id. known is false when the cache cannot
// yet tell whether id exists (no full list applied yet).
func (c *specCache) get(id string) (spec registry.Spec, exists, known bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	spec, exists = c.specs[id]
	return spec, exists, c.listed || exists
}

// wasDeleted reports whether id was seen deleted since the last full list.
func (c *specCache) wasDeleted(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.deleted[id]
	return ok
}

// ids returns every controller id in the cache.
func (c *specCache) ids() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.specs))
	for id := range c.specs {
		out = append(out, id)
	}
	return out
}

// isListed reports whether a full list has been applied.
func (c *specCache) isListed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.listed
}
