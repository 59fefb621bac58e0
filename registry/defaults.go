package registry

import "time"

// Defaults the leader and the nodes share.
const (
	// DefaultSyncPeriod is how often everything is looked at again even
	// without a change: the safety net.
	DefaultSyncPeriod = 30 * time.Second
	// DefaultEtcdTimeout bounds each call to etcd.
	DefaultEtcdTimeout = 5 * time.Second
	// DefaultRevisionHistoryLimit is --revision-history-limit's default.
	DefaultRevisionHistoryLimit = 10
)
