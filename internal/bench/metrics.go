package bench

// This file reads one figure from the Prometheus text format, enough for
// the daemon's counters, without a parser library.

import (
	"strconv"
	"strings"
)

// metricValue sums the samples of metric name whose labels include every
// pair of want. It reports false when no sample matches.
func metricValue(text, name string, want map[string]string) (float64, bool) {
	var sum float64
	found := false
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := cutLast(line)
		if !ok {
			continue
		}
		metric, labels := series, ""
		if i := strings.IndexByte(series, '{'); i >= 0 {
			metric, labels = series[:i], strings.TrimSuffix(series[i+1:], "}")
		}
		if metric != name || !hasLabels(parseLabels(labels), want) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

// cutLast splits a sample line into its series and its value (the last
// field; a timestamp after the value is not used by client_golang).
func cutLast(line string) (series, value string, ok bool) {
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(line[:i]), line[i+1:], true
}

// parseLabels reads `a="x",b="y"`; label values with commas or escaped
// quotes are not needed here.
func parseLabels(s string) map[string]string {
	out := make(map[string]string)
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return out
}

func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// metricByLabel sums the samples of metric name by the value of one of
// their labels.
func metricByLabel(text, name, label string) map[string]float64 {
	out := make(map[string]float64)
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := cutLast(line)
		if !ok {
			continue
		}
		i := strings.IndexByte(series, '{')
		if i < 0 || series[:i] != name {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		out[parseLabels(strings.TrimSuffix(series[i+1:], "}"))[label]] += v
	}
	return out
}
