package api

// This file is the one validator of a controller spec, used by the CLI
// before writing and by the manager before acting, plus the two pure helpers
// that the contract's container labels rest on: the selector match and the
// template hash. It checks values, not syntax (that is Decode's job), and it
// reports every problem at once, each with its field path.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

const (
	// DefaultMaxReplicas is the replica limit when ValidateOptions.MaxReplicas
	// is 0; the daemon's --max-replicas default.
	DefaultMaxReplicas = 1000
	// MaxMaxReplicas is the highest replica limit there may be: the
	// largest --max-replicas, and the cap on ValidateOptions.MaxReplicas.
	MaxMaxReplicas = 100000
	// MaxIDLength is the longest controller id.
	MaxIDLength = 63
	// MinMemoryBytes is Docker's smallest memory limit (6 MiB); 0 means no
	// limit.
	MinMemoryBytes = 6 << 20
)

// Field paths of the spec, as error messages name them.
const (
	pathSelector       = "desiredState.replicasInSet"
	pathTemplateLabels = "desiredState.taskTemplate.labels"
	pathManifest       = "desiredState.taskTemplate.desiredState.manifest"
	pathContainers     = pathManifest + ".containers"
)

// idPattern is what Docker accepts at the start of a container name, so that
// <id>-<slot> is always a valid one.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidateOptions are the daemon's settings that validation depends on.
type ValidateOptions struct {
	// Key is the etcd key the spec was read from (or will be written to),
	// or just its last segment; the id must equal that segment. Empty means
	// the id is not compared.
	Key string
	// MaxReplicas is the largest replica count allowed; 0 (or less) means
	// DefaultMaxReplicas, and more than MaxMaxReplicas means MaxMaxReplicas.
	MaxReplicas int
	// Policy says which security-sensitive container fields are allowed.
	// The zero value refuses them all, so that a manager is safe unless
	// told otherwise; a CLI that leaves the decision to the daemon passes
	// AllowAllPolicy().
	Policy SecurityPolicy
}

// FieldError is one problem with a spec: the field path and what is wrong.
// Details never include environment values, which may be secrets.
type FieldError struct {
	Field  string
	Detail string
}

func (e FieldError) Error() string {
	if e.Field == "" {
		return e.Detail
	}
	return e.Field + ": " + e.Detail
}

// ValidationError lists every problem Validate found, in a stable order.
type ValidationError struct {
	Errors []FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "; ")
}

// Validate checks a decoded spec against the rules of the contract
// (docs/CONTRACT.md, Spec and Containers). It returns nil or a *ValidationError that
// lists every problem with its field path. It does not modify rc.
func Validate(rc *ReplicationController, opts ValidateOptions) error {
	if rc == nil {
		return &ValidationError{Errors: []FieldError{{Detail: "no controller"}}}
	}
	v := &validator{policy: opts.Policy}
	v.id(rc.ID, opts.Key)
	v.labels("labels", rc.Labels)

	ds := &rc.DesiredState
	maxReplicas := opts.MaxReplicas
	if maxReplicas <= 0 {
		maxReplicas = DefaultMaxReplicas
	}
	maxReplicas = min(maxReplicas, MaxMaxReplicas)
	if ds.Replicas < 0 || ds.Replicas > maxReplicas {
		v.add("desiredState.replicas", "must be between 0 and %d, got %d", maxReplicas, ds.Replicas)
	}
	switch {
	case ds.MinReadySeconds < 0:
		v.add("desiredState.minReadySeconds", "must not be negative, got %d", ds.MinReadySeconds)
	case ds.MinReadySeconds > MaxMinReadySeconds:
		v.add("desiredState.minReadySeconds", "must be at most %d (one day), got %d", MaxMinReadySeconds, ds.MinReadySeconds)
	}
	v.labels(pathSelector, ds.ReplicasInSet)
	v.labels(pathTemplateLabels, ds.TaskTemplate.Labels)
	v.labels("desiredState.nodeSelector", ds.NodeSelector)
	v.selector(ds.ReplicasInSet, ds.TaskTemplate.Labels)
	v.manifest(&ds.TaskTemplate.DesiredState.Manifest)
	v.updateStrategy(ds)
	if ds.TaskTemplate.RestartedAt != "" {
		if _, err := time.Parse(time.RFC3339, ds.TaskTemplate.RestartedAt); err != nil {
			v.add("desiredState.taskTemplate.restartedAt", "must be an RFC 3339 time, got %q", shorten(ds.TaskTemplate.RestartedAt))
		}
	}

	if len(v.errs) == 0 {
		return nil
	}
	return &ValidationError{Errors: v.errs}
}

type validator struct {
	policy SecurityPolicy
	errs   []FieldError
}

func (v *validator) add(field, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Field: field, Detail: fmt.Sprintf(format, args...)})
}

func (v *validator) id(id, key string) {
	switch {
	case id == "":
		v.add("id", "required")
		return
	case len(id) > MaxIDLength:
		v.add("id", "must be at most %d characters, got %d", MaxIDLength, len(id))
	case !idPattern.MatchString(id):
		v.add("id", "must consist of letters, digits, '_', '.' or '-' and start with a letter or digit, got %q", id)
	}
	if key == "" {
		return
	}
	if want := key[strings.LastIndexByte(key, '/')+1:]; id != want {
		v.add("id", "must equal the last segment of its key %q, got %q", want, shorten(id))
	}
}

// labels checks the keys and values of a label map against Kubernetes'
// limits (which Docker, having none, accepts) and refuses reserved prefixes.
func (v *validator) labels(field string, labels map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		f := fmt.Sprintf("%s[%q]", field, shorten(k))
		for _, msg := range content.IsLabelKey(k) {
			v.add(f, "invalid key: %s", msg)
		}
		for _, p := range ReservedLabelPrefixes {
			if strings.HasPrefix(k, p) {
				v.add(f, "key uses the reserved prefix %q", p)
			}
		}
		for _, msg := range content.IsLabelValue(labels[k]) {
			v.add(f, "invalid value: %s", msg)
		}
	}
}

// selector checks that the selector is not empty and that every task made
// from the template matches it; otherwise the manager would never see its
// own tasks and would create forever.
func (v *validator) selector(selector, templateLabels map[string]string) {
	if len(selector) == 0 {
		v.add(pathSelector, "must not be empty")
		return
	}
	for _, k := range slices.Sorted(maps.Keys(selector)) {
		got, ok := templateLabels[k]
		switch {
		case !ok:
			v.add(pathTemplateLabels, "missing the selector's key %q (%s wants %q)", shorten(k), pathSelector, shorten(selector[k]))
		case got != selector[k]:
			v.add(pathTemplateLabels, "selector key %q is %q, %s wants %q", shorten(k), shorten(got), pathSelector, shorten(selector[k]))
		}
	}
}

func (v *validator) manifest(m *ContainerManifest) {
	if m.Version != "" && m.Version != "v1beta1" {
		v.add(pathManifest+".version", `must be empty or "v1beta1", got %q`, shorten(m.Version))
	}
	switch {
	case len(m.Containers) < 1 || len(m.Containers) > MaxContainers:
		v.add(pathContainers, "must hold 1 to %d containers, got %d", MaxContainers, len(m.Containers))
	}
	declared := v.taskVolumes(m)
	hostNetwork := len(m.Containers) > 0 && m.Containers[0].HostNetwork
	for i := range m.Containers {
		field := fmt.Sprintf("%s[%d]", pathContainers, i)
		c := &m.Containers[i]
		if i > 0 && c.HostNetwork {
			v.add(field+".hostNetwork", "only the first container may set it: the others share its network")
		}
		v.container(field, c, hostNetwork, declared)
	}
	v.initContainers(m, declared)
	v.group(m)
}

func (v *validator) container(field string, c *Container, hostNetwork bool, declared map[string]bool) {
	if c.Name != "" {
		for _, msg := range content.IsDNS1123Label(c.Name) {
			v.add(field+".name", "%s", msg)
		}
	}
	if c.Image == "" {
		v.add(field+".image", "required")
	} else if _, err := reference.ParseNormalizedNamed(c.Image); err != nil {
		v.add(field+".image", "invalid image reference %q: %v", shorten(c.Image), err)
	}
	switch c.ImagePullPolicy {
	case "", PullIfNotPresent, PullAlways, PullNever:
	default:
		v.add(field+".imagePullPolicy", "must be %s, %s or %s, got %q", PullIfNotPresent, PullAlways, PullNever, shorten(c.ImagePullPolicy))
	}
	for i, arg := range c.Command {
		if arg == "" {
			v.add(fmt.Sprintf("%s.command[%d]", field, i), "must not be empty")
		}
	}
	if c.WorkingDir != "" && !path.IsAbs(c.WorkingDir) {
		v.add(field+".workingDir", "must be an absolute path, got %q", shorten(c.WorkingDir))
	}
	v.ports(field+".ports", c.Ports, hostNetwork)
	v.env(field+".env", c.Env)
	if c.Memory != 0 && c.Memory < MinMemoryBytes {
		v.add(field+".memory", "must be 0 (no limit) or at least %d bytes (6 MiB), got %d", MinMemoryBytes, c.Memory)
	}
	if c.CPU < 0 {
		v.add(field+".cpu", "must not be negative, got %d", c.CPU)
	}
	if c.HealthCheck != nil {
		v.healthCheck(field+".healthCheck", c.HealthCheck)
	}
	v.stop(field, c)
	containerPaths := make(map[string]string)
	v.security(field, c, containerPaths)
	v.volumeMounts(field, c.VolumeMounts, declared, containerPaths)
}

// MinHealthCheckDuration is Docker's smallest health check interval,
// timeout and start period; 0 means the image's value or Docker's default.
const MinHealthCheckDuration = Duration(time.Millisecond)

func (v *validator) healthCheck(field string, h *HealthCheck) {
	test := h.Test
	switch {
	case len(test) == 0:
		v.add(field+".test", `required (["%s"] disables the image's health check)`, HealthTestNone)
	case test[0] == HealthTestNone && len(test) > 1:
		v.add(field+".test", `%q takes no arguments, got %d`, HealthTestNone, len(test)-1)
	case test[0] == HealthTestCmd && len(test) == 1:
		v.add(field+".test", `%q needs a command after it`, HealthTestCmd)
	case test[0] == HealthTestCmdShell && len(test) != 2:
		v.add(field+".test", `%q takes one argument, the shell command, got %d (write test as an array to keep the spaces: ["%s", "curl -f http://localhost/"])`,
			HealthTestCmdShell, len(test)-1, HealthTestCmdShell)
	}
	for i, arg := range test {
		if arg == "" {
			v.add(fmt.Sprintf("%s.test[%d]", field, i), "must not be empty")
		}
	}
	for _, d := range []struct {
		name  string
		value Duration
	}{{"interval", h.Interval}, {"timeout", h.Timeout}, {"startPeriod", h.StartPeriod}} {
		if d.value < 0 || (d.value > 0 && d.value < MinHealthCheckDuration) {
			v.add(field+"."+d.name, "must be 0 (the default) or at least %s, got %s", MinHealthCheckDuration, d.value)
		}
	}
	if h.Retries < 0 {
		v.add(field+".retries", "must not be negative, got %d", h.Retries)
	}
	switch h.OnUnhealthy {
	case "", OnUnhealthyIgnore:
	case OnUnhealthyReplace:
		if h.Disabled() {
			v.add(field+".onUnhealthy", "%q needs a health check, and the test is %q", OnUnhealthyReplace, HealthTestNone)
		}
	default:
		v.add(field+".onUnhealthy", "must be %q (the default) or %q, got %q", OnUnhealthyIgnore, OnUnhealthyReplace, shorten(h.OnUnhealthy))
	}
}

// ports checks the ports; hostNetwork says whether the container shares
// the host's network, where publishing means nothing.
func (v *validator) ports(field string, ports []Port, hostNetwork bool) {
	// hostPorts remembers the first port that publishes each host
	// port/protocol pair: Docker cannot bind one twice.
	hostPorts := make(map[string]int)
	for i, p := range ports {
		f := fmt.Sprintf("%s[%d]", field, i)
		if p.ContainerPort < 1 || p.ContainerPort > 65535 {
			v.add(f+".containerPort", "must be between 1 and 65535, got %d", p.ContainerPort)
		}
		if p.HostPort < 0 || p.HostPort > 65535 {
			v.add(f+".hostPort", "must be between 0 and 65535, got %d", p.HostPort)
		}
		proto := strings.ToUpper(p.Protocol)
		switch p.Protocol {
		case "":
			proto = "TCP"
		case "TCP", "UDP", "tcp", "udp":
		default:
			v.add(f+".protocol", `must be "TCP" or "UDP", got %q`, shorten(p.Protocol))
		}
		switch {
		case p.HostPort <= 0 || p.HostPort > 65535:
		case hostNetwork:
			v.add(f+".hostPort", "must be 0 with hostNetwork: ports are not published on the host's network; the container listens on the host's port %d directly", p.ContainerPort)
		}
		if p.HostPort > 0 {
			hp := fmt.Sprintf("%d/%s", p.HostPort, proto)
			if first, dup := hostPorts[hp]; dup {
				v.add(f+".hostPort", "host port %s is already published by %s[%d]", hp, field, first)
			} else {
				hostPorts[hp] = i
			}
		}
	}
}

// env checks variable names only: values may be secrets and never appear in
// a message.
func (v *validator) env(field string, env []EnvVar) {
	first := make(map[string]int)
	for i, e := range env {
		f := fmt.Sprintf("%s[%d].name", field, i)
		switch {
		case e.Name == "":
			v.add(f, "required")
		case strings.Contains(e.Name, "="):
			v.add(f, "must not contain '='") // what follows it may be a value
		default:
			if j, dup := first[e.Name]; dup {
				v.add(f, "duplicate name %q, first set by %s[%d]", shorten(e.Name), field, j)
			} else {
				first[e.Name] = i
			}
		}
	}
}

// shorten keeps a quoted user value from drowning the message.
func shorten(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := 0
	for i := range s { // rune boundaries
		if i > limit {
			break
		}
		cut = i
	}
	return s[:cut] + "..."
}

// SelectorMatches reports whether labels contain every pair of selector.
// An empty selector matches nothing: Validate refuses one, and a controller
// must never adopt every container on the host.
func SelectorMatches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, want := range selector {
		if got, ok := labels[k]; !ok || got != want {
			return false
		}
	}
	return true
}

// TemplateHashLength is the length of TemplateHash's result.
const TemplateHashLength = 10

// TemplateHash returns a short, stable hash of a task template: the first
// TemplateHashLength hex digits of the SHA-256 of its JSON encoding (map keys
// sorted, so the encoding is canonical). Containers carry it as
// LabelTemplateHash, so that a changed template is noticed. A command given
// as a string and the same command as an array hash alike. Fields added to
// the types must be omitempty, or every existing template's hash changes.
// Likewise a task volume without a source hashes as the emptyDir it is.
func TemplateHash(t *TaskTemplate) string {
	data, err := json.Marshal(canonicalTemplate(t))
	if err != nil {
		// The types hold only strings, integers, maps and slices of them.
		panic(fmt.Sprintf("api: encode task template: %v", err))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:TemplateHashLength]
}

// canonicalTemplate returns t, or a copy of it in which each task volume
// without a source has an emptyDir one, so that both spellings of an
// emptyDir hash alike. t itself is never changed.
func canonicalTemplate(t *TaskTemplate) *TaskTemplate {
	vols := t.DesiredState.Manifest.Volumes
	if !slices.ContainsFunc(vols, func(v TaskVolume) bool { return v.Source == nil }) {
		return t
	}
	c := *t
	c.DesiredState.Manifest.Volumes = slices.Clone(vols)
	for i := range c.DesiredState.Manifest.Volumes {
		if c.DesiredState.Manifest.Volumes[i].Source == nil {
			c.DesiredState.Manifest.Volumes[i].Source = &VolumeSource{EmptyDir: &EmptyDirSource{}}
		}
	}
	return &c
}
