package api

import (
	"maps"
	"strings"
	"testing"
)

func TestParseNodeLabels(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", want: map[string]string{}},
		{in: "zone=a", want: map[string]string{"zone": "a"}},
		{in: " zone=a , disk=ssd ", want: map[string]string{"zone": "a", "disk": "ssd"}},
		{in: "gpu=", want: map[string]string{"gpu": ""}},
		{in: "zone", wantErr: `"zone": want key=value`},
		{in: "=a", wantErr: `"=a": want key=value`},
		{in: "zone=a,zone=b", wantErr: `key "zone" given twice`},
		{in: "zone=a b", wantErr: `["zone"]: invalid value`},
		{in: "replicationController.x=1", wantErr: "reserved prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseNodeLabels(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseNodeLabels(%q): got %v, want an error containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("ParseNodeLabels(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if back, _ := ParseNodeLabels(FormatLabels(got)); !maps.Equal(back, got) {
				t.Errorf("FormatLabels(%v) = %q does not parse back", got, FormatLabels(got))
			}
		})
	}
}

func TestValidateNodeName(t *testing.T) {
	for _, ok := range []string{"a", "node-1", "host.example.com", "vm"} {
		if err := ValidateNodeName(ok); err != nil {
			t.Errorf("ValidateNodeName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "-a", "a b", strings.Repeat("x", 64)} {
		if err := ValidateNodeName(bad); err == nil {
			t.Errorf("ValidateNodeName(%q): got nil, want an error", bad)
		}
	}
}

func TestValidateNodeSelector(t *testing.T) {
	rc := validWeb()
	rc.DesiredState.NodeSelector = map[string]string{"zone": "a b"}
	err := Validate(rc, ValidateOptions{})
	if err == nil || !strings.Contains(err.Error(), `desiredState.nodeSelector["zone"]: invalid value`) {
		t.Errorf("Validate with a bad nodeSelector value: got %v, want the field named", err)
	}
	rc.DesiredState.NodeSelector = map[string]string{"zone": "a"}
	if err := Validate(rc, ValidateOptions{}); err != nil {
		t.Errorf("Validate with nodeSelector zone=a: %v", err)
	}
}
