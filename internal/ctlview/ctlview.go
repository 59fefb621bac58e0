package ctlview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// Hidden stands for an environment variable's value wherever a view shows
// a spec: values may be secrets.
const Hidden = "<hidden>"

// EncodeJSON writes v as rcctl writes JSON: indented by two spaces, '<',
// '>' and '&' as they are (a command such as "a && b" stays readable), and
// a final newline. Serve it as application/json, never as HTML.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeSpecs writes specs as `rcctl get -o json` prints them:
// {"items": [...]}, each item as api.Encode writes it, the form
// `rcctl apply -f` reads back. Environment values are in it: it is a
// backup, not a view.
func EncodeSpecs(rcs []*api.ReplicationController) ([]byte, error) {
	items := make([]json.RawMessage, 0, len(rcs))
	for _, rc := range rcs {
		data, err := api.Encode(rc)
		if err != nil {
			return nil, fmt.Errorf("controller %q: %w", rc.ID, err)
		}
		items = append(items, data)
	}
	return EncodeJSON(struct {
		Items []json.RawMessage `json:"items"`
	}{items})
}

// List is the document of the daemon's /api/v1/controllers: the manager
// that answered, and every controller by id.
type List struct {
	Manager Manager      `json:"manager"`
	Items   []Controller `json:"items"`
}

// One is the document of /api/v1/controllers/<id>: the manager that
// answered and one controller, with its containers and events.
type One struct {
	Manager Manager    `json:"manager"`
	Item    Controller `json:"item"`
}

// Roles of the manager that answers, and where its data comes from.
const (
	// RoleLeader: this manager acts for its node (docs/CONTRACT.md, Nodes;
	// the value predates nodes and stays, as the page's JSON has it); the
	// specs and its node's containers are its own caches (SourceManager),
	// the statuses and the other nodes' containers come from etcd.
	RoleLeader = "leader"
	// RoleStandby: another manager acts for this node; this one reads
	// etcd (SourceEtcd) and knows no containers.
	RoleStandby = "standby"
	// RoleStarting: this manager will act but has not listed the
	// controllers yet; it reads etcd meanwhile.
	RoleStarting = "starting"

	SourceManager = "manager"
	SourceEtcd    = "etcd"
)

// Manager says who answered: its role, where the data comes from, and its
// clock when it answered (ages are counted from it, not from the reader's
// clock).
type Manager struct {
	Role   string    `json:"role"`
	Source string    `json:"source"`
	Time   time.Time `json:"time"`
	// Leaderless: the managers take part in the leader election and none
	// holds it, so no slot is placed or moved and no status is written.
	Leaderless bool `json:"leaderless,omitempty"`
}

// Controller is one controller as the daemon serves it. The spec's fields
// are where `rcctl get -o json` puts them (id, labels, desiredState), with
// every environment value replaced by Hidden; then what the manager
// reports. It is not a spec: the decoder refuses its extra fields, so it
// cannot be applied back by mistake.
type Controller struct {
	ID           string                          `json:"id"`
	Labels       map[string]string               `json:"labels,omitempty"`
	DesiredState *api.ReplicationControllerState `json:"desiredState,omitempty"`
	// Revision is the spec's etcd ModRevision.
	Revision int64 `json:"revision"`
	// SpecError says why the stored spec does not decode; the spec's
	// fields are then absent.
	SpecError string `json:"specError,omitempty"`
	// Status is the last status the manager wrote; null before the first.
	Status *api.ReplicationControllerStatus `json:"status"`
	// State and Reasons are the conditions at a glance (Summarize).
	State   string   `json:"state"`
	Reasons []string `json:"reasons,omitempty"`
	// Containers and Events are in the document of one controller only.
	// Containers is null when the answering manager does not know them (a
	// standby).
	Containers []Container `json:"containers,omitempty"`
	Events     []api.Event `json:"events,omitempty"`
}

// Container is one of a controller's containers, as the manager's cache
// has it.
type Container struct {
	Name string `json:"name"`
	// Node is the Docker engine the container runs on.
	Node   string `json:"node"`
	Slot   string `json:"slot,omitempty"`
	State  string `json:"state"`
	Health string `json:"health,omitempty"`
	Image  string `json:"image,omitempty"`
	// UpToDate says whether it was made from the spec's current template.
	UpToDate bool      `json:"upToDate"`
	Created  time.Time `json:"created,omitzero"`
	// ImageID is the image the container runs, and RepoDigest the digest
	// a registry knows it by, as far as its node knows them.
	ImageID    string `json:"imageID,omitempty"`
	RepoDigest string `json:"repoDigest,omitempty"`
}

// StatePulling is the state shown for a slot whose container waits for
// its image's pull (api.NodeReport.Pulling).
const StatePulling = "pulling"

// States of a controller at a glance.
const (
	// StateOK: nothing is wrong that the conditions say.
	StateOK = "ok"
	// StateFailing: ReplicaFailure, CrashLoop or InvalidSpec is True,
	// Progressing is False (a stalled rollout, or Blocked: slots that fit
	// no node), or the spec does not decode.
	StateFailing = "failing"
	// StateRolling: a rolling update is under way (Progressing True,
	// reason RollingUpdate). A scale (reason Scaling) is not one.
	StateRolling = "rolling"
	// StatePending: the manager has not reported on it yet.
	StatePending = "pending"
)

// failingConditions are the condition types that say the controller fails
// when True.
var failingConditions = []string{api.ConditionReplicaFailure, api.ConditionCrashLoop, api.ConditionInvalidSpec}

// Summarize gives a controller's state at a glance and the conditions that
// make it so, each as "Type: Reason" (or "Type=False: Reason" for a
// Progressing that failed), a ReplicaFailure with its message, which says
// what failed ("ReplicaFailure: CreateFailed (create web-3: no such image:
// demo-task:v3)"). Failing wins over rolling.
func Summarize(st *api.ReplicationControllerStatus, specErr error) (state string, reasons []string) {
	rolling := false
	if st != nil {
		for _, c := range st.Conditions {
			switch {
			case c.Status == "True" && c.Type == api.ConditionReplicaFailure && c.Message != "":
				reasons = append(reasons, withReason(c.Type, c.Reason)+" ("+OneLineString(c.Message)+")")
			case c.Status == "True" && slices.Contains(failingConditions, c.Type):
				reasons = append(reasons, withReason(c.Type, c.Reason))
			case c.Type == api.ConditionProgressing && c.Status == "False":
				reasons = append(reasons, withReason(c.Type+"=False", c.Reason))
			case c.Type == api.ConditionProgressing && c.Status == "True" && c.Reason == api.ReasonRollingUpdate:
				rolling = true
			}
		}
	}
	if specErr != nil && (st == nil || st.FindCondition(api.ConditionInvalidSpec) == nil) {
		// the manager has not reported it yet: say so from the spec itself
		reasons = append([]string{withReason(api.ConditionInvalidSpec, api.ReasonUndecodable)}, reasons...)
	}
	switch {
	case len(reasons) > 0:
		return StateFailing, reasons
	case st == nil:
		return StatePending, nil
	case rolling:
		return StateRolling, []string{withReason(api.ConditionProgressing, api.ReasonRollingUpdate)}
	}
	return StateOK, nil
}

func withReason(what, reason string) string {
	if reason == "" {
		return what
	}
	return what + ": " + reason
}

// HideEnv returns the desired state with every environment value replaced
// by Hidden. It copies the slices it changes: those of ds may be a
// cache's, and are left as they are.
func HideEnv(ds api.ReplicationControllerState) *api.ReplicationControllerState {
	m := &ds.TaskTemplate.DesiredState.Manifest
	m.Containers = hideEnv(m.Containers)
	m.InitContainers = hideEnv(m.InitContainers)
	return &ds
}

// hideEnv returns a copy of containers with every environment value
// replaced by Hidden.
func hideEnv(containers []api.Container) []api.Container {
	containers = slices.Clone(containers)
	for i := range containers {
		if len(containers[i].Env) == 0 {
			continue
		}
		env := make([]api.EnvVar, len(containers[i].Env))
		for j, e := range containers[i].Env {
			env[j] = api.EnvVar{Name: e.Name, Value: Hidden}
		}
		containers[i].Env = env
	}
	return containers
}
