package main

import (
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"

	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
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
	descs := make(chan *prometheus.Desc, 1000)
	for _, c := range []prometheus.Collector{isLeader, isActing, nodes, &controllerCollector{}} {
		c.Describe(descs)
	}
	// and the node's own, which its agent registers
	agent.New(registry.NewStore(nil, ""), &taskcontrol.Fake{}, slog.New(slog.DiscardHandler), agent.Options{Registerer: describer(descs)})
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

// describer is a Registerer that only sends the descriptions of what is
// registered to its channel.
type describer chan *prometheus.Desc

func (d describer) Register(c prometheus.Collector) error {
	c.Describe(d)
	return nil
}

func (d describer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		c.Describe(d)
	}
}

func (d describer) Unregister(prometheus.Collector) bool { return false }
