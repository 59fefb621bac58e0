package bench

// This file reads figures from the daemon's /metrics, in the Prometheus
// text format, with the format's own parser.

import (
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseMetrics reads the metric families of text.
func parseMetrics(text string) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	return families, nil
}

// sampleValue is the value of a counter, gauge or untyped sample.
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// labelsOf are the labels of a sample, by name.
func labelsOf(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// metricValue sums the samples of metric name whose labels include every
// pair of want. It reports false when no sample matches, or text does not
// parse.
func metricValue(text, name string, want map[string]string) (float64, bool) {
	families, err := parseMetrics(text)
	if err != nil {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range families[name].GetMetric() {
		labels := labelsOf(m)
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if match {
			sum += sampleValue(m)
			found = true
		}
	}
	return sum, found
}

// metricByLabel sums the samples of metric name by the value of one of
// their labels.
func metricByLabel(text, name, label string) map[string]float64 {
	out := make(map[string]float64)
	families, err := parseMetrics(text)
	if err != nil {
		return out
	}
	for _, m := range families[name].GetMetric() {
		out[labelsOf(m)[label]] += sampleValue(m)
	}
	return out
}
