package ctlview

// The documents of `rcctl get -o json|yaml`: each controller's spec as
// stored, with the status the manager last wrote under currentState, the
// 2014 name of a controller's observed state. `rcctl apply` ignores
// currentState, so that what get prints applies back unchanged.

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v2"

	"github.com/replication-manager/replication-manager/api"
)

// CurrentStateField is the name of the status in a document of
// `rcctl get -o json|yaml`.
const CurrentStateField = "currentState"

// WithStatus is one controller as `rcctl get -o json` prints it: the
// spec's fields (id, labels, desiredState) as api.Encode writes them, then
// the status under currentState, absent when the manager has written none.
type WithStatus struct {
	*api.ReplicationController
	CurrentState *api.ReplicationControllerStatus `json:"currentState,omitempty"`
}

// EncodeWithStatus writes one controller with its status (st may be nil)
// as EncodeJSON writes JSON.
func EncodeWithStatus(rc *api.ReplicationController, st *api.ReplicationControllerStatus) ([]byte, error) {
	if rc == nil {
		return nil, fmt.Errorf("encode controller: nil controller")
	}
	data, err := EncodeJSON(WithStatus{rc, st})
	if err != nil {
		return nil, fmt.Errorf("controller %q: %w", rc.ID, err)
	}
	return data, nil
}

// EncodeListWithStatus writes {"items": [...]}, each item as
// EncodeWithStatus writes it; statuses are by controller id.
func EncodeListWithStatus(rcs []*api.ReplicationController, statuses map[string]*api.ReplicationControllerStatus) ([]byte, error) {
	items := make([]WithStatus, 0, len(rcs))
	for _, rc := range rcs {
		items = append(items, WithStatus{rc, statuses[rc.ID]})
	}
	return EncodeJSON(struct {
		Items []WithStatus `json:"items"`
	}{items})
}

// JSONToYAML rewrites a JSON document as YAML with the keys in the order
// the JSON has them (id first), as api.EncodeYAML writes a spec.
func JSONToYAML(data []byte) ([]byte, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("to YAML: not a JSON document")
	}
	// JSON is YAML; decoding into a MapSlice keeps the key order.
	var doc yaml.MapSlice
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("to YAML: %w", err)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("to YAML: %w", err)
	}
	return out, nil
}
