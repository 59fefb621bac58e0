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

func TestMergeNodeLabelsTheKeyWins(t *testing.T) {
	got := MergeNodeLabels(map[string]string{"zone": "a", "disk": "ssd"}, map[string]string{"zone": "c"})
	if got["zone"] != "c" || got["disk"] != "ssd" || len(got) != 2 {
		t.Errorf("merged = %v", got)
	}
}
