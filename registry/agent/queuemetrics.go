package agent

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// queueMetrics exports the work queue's own series under the names
// Kubernetes controllers use (workqueue_depth, workqueue_adds_total, ...),
// labelled by queue name.
type queueMetrics struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinished     *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var _ workqueue.MetricsProvider = (*queueMetrics)(nil)

func newQueueMetrics(reg prometheus.Registerer) *queueMetrics {
	buckets := prometheus.ExponentialBuckets(10e-6, 10, 10)
	q := &queueMetrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_depth", Help: "Current depth of the work queue.",
		}, []string{"name"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total", Help: "Adds handled by the work queue.",
		}, []string{"name"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workqueue_queue_duration_seconds", Help: "How long an item stays in the queue before it is taken.", Buckets: buckets,
		}, []string{"name"}),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workqueue_work_duration_seconds", Help: "How long processing an item takes.", Buckets: buckets,
		}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration.",
		}, []string{"name"}),
		longestRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_longest_running_processor_seconds", Help: "Seconds the longest running processor has been running.",
		}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total", Help: "Retries handled by the work queue.",
		}, []string{"name"}),
	}
	if reg != nil {
		q.depth = register(reg, q.depth)
		q.adds = register(reg, q.adds)
		q.latency = register(reg, q.latency)
		q.workDuration = register(reg, q.workDuration)
		q.unfinished = register(reg, q.unfinished)
		q.longestRunning = register(reg, q.longestRunning)
		q.retries = register(reg, q.retries)
	}
	return q
}

func (q *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return q.depth.WithLabelValues(name)
}

func (q *queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return q.adds.WithLabelValues(name)
}

func (q *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return q.latency.WithLabelValues(name)
}

func (q *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return q.workDuration.WithLabelValues(name)
}

func (q *queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.unfinished.WithLabelValues(name)
}

func (q *queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.longestRunning.WithLabelValues(name)
}

func (q *queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return q.retries.WithLabelValues(name)
}
