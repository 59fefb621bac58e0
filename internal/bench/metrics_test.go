package bench

import "testing"

const sampleMetrics = `# HELP replication_manager_containers_total Container operations.
# TYPE replication_manager_containers_total counter
replication_manager_containers_total{operation="create",result="error"} 6
replication_manager_containers_total{operation="create",result="success"} 30
replication_manager_containers_total{operation="delete",result="success"} 30
# TYPE replication_manager_is_leader gauge
replication_manager_is_leader 1
`

func TestMetricValue(t *testing.T) {
	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
		found  bool
	}{
		{"one series", "replication_manager_containers_total", map[string]string{"operation": "create", "result": "error"}, 6, true},
		{"summed over the labels not asked for", "replication_manager_containers_total", map[string]string{"operation": "create"}, 36, true},
		{"no labels", "replication_manager_is_leader", nil, 1, true},
		{"no such series", "replication_manager_containers_total", map[string]string{"operation": "rename"}, 0, false},
		{"a prefix of a name is not the name", "replication_manager_containers", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := metricValue(sampleMetrics, tt.metric, tt.labels)
			if got != tt.want || found != tt.found {
				t.Errorf("metricValue = %v, %v; want %v, %v", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestMetricByLabel(t *testing.T) {
	got := metricByLabel(sampleMetrics, "replication_manager_containers_total", "operation")
	want := map[string]float64{"create": 36, "delete": 30}
	if len(got) != len(want) || got["create"] != want["create"] || got["delete"] != want["delete"] {
		t.Errorf("metricByLabel = %v, want %v", got, want)
	}
}
