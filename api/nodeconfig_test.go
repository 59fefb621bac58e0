package api

import (
	"strings"
	"testing"
)

func TestNodeConfigValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		json, field string
	}{
		{`{"availability":"cordon"}`, "availability"},
		{`{"labels":{"-bad":"x"}}`, "labels"},
		{`{"available":"pause"}`, "available"},
	} {
		_, err := DecodeNodeConfig([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("DecodeNodeConfig(%s) = %v, want an error naming %s", tc.json, err, tc.field)
		}
	}
	c, err := DecodeNodeConfig([]byte(`{"availability":"drain","labels":{"zone":"c"}}`))
	if err != nil || c.Effective() != NodeDrain || c.Labels["zone"] != "c" {
		t.Errorf("a valid config: %+v, %v", c, err)
	}
	if (NodeConfig{}).Effective() != NodeActive {
		t.Error("an empty config is not active")
	}
}

func TestANodeConfigInYAMLReadsAsInJSON(t *testing.T) {
	c, err := DecodeNodeConfig([]byte("availability: pause\nlabels:\n  zone: c\n"))
	if err != nil || c.Effective() != NodePause || c.Labels["zone"] != "c" {
		t.Errorf("a config in YAML: %+v, %v; want pause and zone c", c, err)
	}
	for _, bad := range []string{
		"availability: pause\navailability: drain\n", // a key twice
		"available: pause\n",                         // a field it does not know
	} {
		if _, err := DecodeNodeConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "availab") {
			t.Errorf("DecodeNodeConfig(%q) = %v, want an error naming the field", bad, err)
		}
	}
}

func TestMergeNodeLabelsTheKeyWins(t *testing.T) {
	got := MergeNodeLabels(map[string]string{"zone": "a", "disk": "ssd"}, map[string]string{"zone": "c"})
	if got["zone"] != "c" || got["disk"] != "ssd" || len(got) != 2 {
		t.Errorf("merged = %v", got)
	}
}
