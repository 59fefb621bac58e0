package registry

import "sync"

// keyLocks hands out one mutex per controller id, so that a controller is
// never synced by two goroutines at once while different controllers sync
// in parallel. Unused mutexes are dropped, so memory follows the number of
// syncs in progress, not the number of controllers ever seen.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu      sync.Mutex
	waiters int
}

// lock takes the lock of id and returns the function that releases it.
func (k *keyLocks) lock(id string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyLock)
	}
	l, ok := k.locks[id]
	if !ok {
		l = &keyLock{}
		k.locks[id] = l
	}
	l.waiters++
	k.mu.Unlock()

	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.waiters--
		if l.waiters == 0 {
			delete(k.locks, id)
		}
		k.mu.Unlock()
	}
}

// held reports how many ids have a lock taken or waited for; tests use it
// to check that every lock was released.
func (k *keyLocks) held() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.locks)
}
