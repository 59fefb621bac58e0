package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the manager's own Prometheus series.
type metrics struct {
	syncDuration  *prometheus.HistogramVec
	watchRestarts *prometheus.CounterVec
	containers    *prometheus.CounterVec
	// dockerWatchRestarts counts restarts of the Docker event stream.
	dockerWatchRestarts prometheus.Counter
	// cacheDrift counts the controllers a container list found the cache
	// wrong about.
	cacheDrift      prometheus.Counter
	dockerCalls     *prometheus.CounterVec
	dockerDuration  *prometheus.HistogramVec
	queue           *queueMetrics
	syncPanics      prometheus.Counter
	rolloutSteps    prometheus.Counter
	rolloutDuration prometheus.Histogram
	// eventsDropped counts events that were never written: the queue was
	// full, or etcd did not take them in time.
	eventsDropped prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "replication_manager_sync_duration_seconds",
			Help:    "Time of one controller sync, by result (success, error, invalid, deleted, unknown; unchanged: a periodic sync of a calm controller whose inputs had not changed).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"result"}),
		watchRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "replication_manager_etcd_watch_restarts_total",
			Help: "Restarts of the controller watch, by reason (compacted, closed, error).",
		}, []string{"reason"}),
		containers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "replication_manager_containers_total",
			Help: "Containers created and deleted by the manager, by operation (create, delete) and result (success, error).",
		}, []string{"operation", "result"}),
		dockerWatchRestarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "replication_manager_docker_watch_restarts_total",
			Help: "Restarts of the Docker event stream; each one relists the containers.",
		}),
		cacheDrift: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "replication_manager_cache_drift_total",
			Help: "Controllers whose containers a list found other than the events had told the cache; each is synced at once.",
		}),
		dockerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "replication_manager_docker_calls_total",
			Help: "Docker API calls, by operation (list, inspect, image, pull, create, rename, delete, events, ...) and result (success, error, conflict, not_found).",
		}, []string{"operation", "result"}),
		dockerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "replication_manager_docker_call_duration_seconds",
			Help:    "Time of Docker API calls, by operation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"operation"}),
		queue: newQueueMetrics(reg),
		syncPanics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "replication_manager_sync_panics_total",
			Help: "Syncs that panicked; each is logged with its stack and retried. Any is a bug: please report it.",
		}),
		rolloutSteps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "replication_manager_rollout_steps_total",
			Help: "Outdated containers a rolling update replaced (stopped first, or started first under a surge).",
		}),
		rolloutDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "replication_manager_rollout_duration_seconds",
			Help:    "Time from the manager's first look at a new template until every replica runs it and is available.",
			Buckets: prometheus.ExponentialBuckets(0.25, 2, 14),
		}),
		eventsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "replication_manager_events_dropped_total",
			Help: "Controller events not written to etcd (queue full, or etcd away); syncs never wait for events.",
		}),
	}
	if reg != nil {
		m.syncDuration = register(reg, m.syncDuration)
		m.watchRestarts = register(reg, m.watchRestarts)
		m.containers = register(reg, m.containers)
		m.dockerWatchRestarts = register(reg, m.dockerWatchRestarts)
		m.cacheDrift = register(reg, m.cacheDrift)
		m.dockerCalls = register(reg, m.dockerCalls)
		m.dockerDuration = register(reg, m.dockerDuration)
		m.syncPanics = register(reg, m.syncPanics)
		m.eventsDropped = register(reg, m.eventsDropped)
		m.rolloutSteps = register(reg, m.rolloutSteps)
		m.rolloutDuration = register(reg, m.rolloutDuration)
	}
	return m
}

// register registers c, or returns the collector registered before it, so
// that the managers of successive leadership terms share their series.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
		panic(fmt.Sprintf("register metric: %v", err))
	}
	return c
}

func (m *metrics) observeSync(start time.Time, result string) {
	m.syncDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
}

func (m *metrics) countContainerOp(op string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	m.containers.WithLabelValues(op, result).Inc()
}
