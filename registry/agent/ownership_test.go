package agent

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestClaimOfChecksRegistryThenControllerThenSelector(t *testing.T) {
	selector := map[string]string{"name": "web"}
	tests := []struct {
		name     string
		labels   map[string]string
		selector map[string]string
		want     claim
	}{
		{"ours", map[string]string{api.LabelRegistry: "r1", api.LabelController: "web", "name": "web"}, selector, claimOwned},
		{"made before the registry label", map[string]string{api.LabelController: "web", "name": "web"}, selector, claimOwned},
		{"another registry's, same controller id", map[string]string{api.LabelRegistry: "r2", api.LabelController: "web", "name": "web"}, selector, claimNone},
		{"another controller's", map[string]string{api.LabelRegistry: "r1", api.LabelController: "api", "name": "web"}, selector, claimNone},
		{"hand-started with the user labels only", map[string]string{"name": "web"}, selector, claimNone},
		{"outside the selector", map[string]string{api.LabelRegistry: "r1", api.LabelController: "web", "name": "old"}, selector, claimOutsideSet},
		{"cascade: no selector, label alone", map[string]string{api.LabelRegistry: "r1", api.LabelController: "web", "name": "old"}, nil, claimOwned},
		{"cascade never takes another registry's", map[string]string{api.LabelRegistry: "r2", api.LabelController: "web"}, nil, claimNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claimOf("r1", "web", tt.selector, tt.labels); got != tt.want {
				t.Errorf("claimOf = %v, want %v", got, tt.want)
			}
		})
	}
}
