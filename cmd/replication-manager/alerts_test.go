package main

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"
)

// TestTheExampleAlertRulesNameOnlyExportedMetrics reads the rules of
// docs/ALERTS.md: each has a name, an expression and a duration, and every
// metric an expression names is one the daemon's role metrics export.
// The fields are those of Prometheus' rule format, read strictly.
func TestTheExampleAlertRulesNameOnlyExportedMetrics(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ALERTS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```yaml\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("docs/ALERTS.md has no ```yaml block")
	}
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.UnmarshalStrict([]byte(block), &rules); err != nil {
		t.Fatalf("the rules do not parse: %v", err)
	}

	exported := map[string]bool{}
	isLeader, isActing, nodes := roleMetrics()
	descs := make(chan *prometheus.Desc, 100)
	for _, c := range []prometheus.Collector{isLeader, isActing, nodes, &controllerCollector{}} {
		c.Describe(descs)
	}
	close(descs)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			exported[m[1]] = true
		}
	}
	metric := regexp.MustCompile(`replication_manager_[a-z_]+`)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("a rule of group %q has no alert name or no expression", g.Name)
			}
			if _, err := time.ParseDuration(r.For); err != nil {
				t.Errorf("alert %s: for %q: %v", r.Alert, r.For, err)
			}
			names := metric.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("alert %s names no metric of the manager", r.Alert)
			}
			for _, name := range names {
				if !exported[name] {
					t.Errorf("alert %s names %s, which the daemon does not export (it exports %v)", r.Alert, name, slices.Sorted(maps.Keys(exported)))
				}
			}
		}
	}
	if n == 0 {
		t.Error("no rules")
	}
}
