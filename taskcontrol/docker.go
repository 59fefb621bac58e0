package taskcontrol

// This file runs tasks on a Docker Engine through the Docker client. It
// creates, starts, lists, inspects, renames and deletes containers and
// streams their events (dockerpull.go pulls images); it never logs: every error
// is returned to the caller, wrapped once with the verb and the container.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/nat"

	"github.com/replication-manager/replication-manager/api"
)

// ErrImageNotFound is api.ErrImageNotFound, kept here for callers that
// know the Docker side only.
var ErrImageNotFound = api.ErrImageNotFound

// DefaultStopTimeout is how long DeleteTask lets a container stop after
// SIGTERM before Docker kills it, when DockerOptions.StopTimeout is zero.
const DefaultStopTimeout = 10 * time.Second

// DockerOptions configure NewDocker.
type DockerOptions struct {
	// Host is the Docker Engine address, such as unix:///var/run/docker.sock
	// or tcp://10.0.0.1:2376. Empty means the environment, as the docker
	// CLI reads it: DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH and
	// DOCKER_API_VERSION, else the local socket. (CLI contexts are not
	// read.)
	Host string
	// StopTimeout is the grace period of a container whose spec sets
	// none: how long DeleteTask lets it stop before the engine kills it;
	// zero means DefaultStopTimeout.
	StopTimeout time.Duration
	// MaxStopGrace caps every container's grace period, its own and
	// StopTimeout (--stop-when-isolated); zero caps nothing.
	MaxStopGrace time.Duration
	// DockerConfig is the Docker client configuration directory whose
	// credentials PullImage uses (--docker-config); empty means
	// $DOCKER_CONFIG, else ~/.docker.
	DockerConfig string
}

// Docker is a task control backed by a Docker Engine. It negotiates the API
// version with the engine, so it works with Engine 20.10 (API 1.41) and
// newer. It is safe for concurrent use.
type Docker struct {
	cli          *client.Client
	stopTimeout  time.Duration
	maxStopGrace time.Duration
	dockerConfig string
}

// NewDocker returns a Docker task control. It does not contact the engine;
// call Ping to check that one answers.
func NewDocker(opts DockerOptions) (*Docker, error) {
	if opts.StopTimeout < 0 || opts.MaxStopGrace < 0 {
		return nil, fmt.Errorf("docker: stop timeouts must not be negative, got %s and %s", opts.StopTimeout, opts.MaxStopGrace)
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	clientOpts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if opts.Host != "" {
		clientOpts = append(clientOpts, client.WithHost(opts.Host))
	}
	cli, err := client.NewClientWithOpts(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return &Docker{cli: cli, stopTimeout: opts.StopTimeout, maxStopGrace: opts.MaxStopGrace, dockerConfig: opts.DockerConfig}, nil
}

// Ping checks that the engine answers.
func (d *Docker) Ping(ctx context.Context) error {
	if _, err := d.cli.Ping(ctx); err != nil {
		return fmt.Errorf("ping docker at %s: %w", d.cli.DaemonHost(), err)
	}
	return nil
}

// Close releases the client's idle connections.
func (d *Docker) Close() error {
	return d.cli.Close()
}

// ListTasks returns every container, in any state, whose labels contain
// every pair of selector (all containers when selector is empty); a value
// of api.AnyLabelValue matches any value of its key.
//
// It costs one list call and no inspect, so Health is read from the list's
// human-readable status ("Up 3 seconds (healthy)"), and Created has a
// one-second resolution. StartedAt, FinishedAt and ExitCode are left zero:
// the list does not report them; InspectTask does. CheckedAt of a running
// container is a second before the list was sent, since its Created may
// be a second early.
func (d *Docker) ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error) {
	args := filters.NewArgs()
	for k, v := range selector {
		if v == api.AnyLabelValue {
			args.Add("label", k) // Docker's filter for "has the key"
			continue
		}
		args.Add("label", k+"="+v)
	}
	asked := time.Now()
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	tasks := make([]api.Task, 0, len(list))
	for _, c := range list {
		tasks = append(tasks, checked(taskFromSummary(c), asked.Add(-time.Second)))
	}
	return tasks, nil
}

// CreateTask creates a container named spec.Name and starts it. A name that
// is taken gives an error wrapping api.ErrTaskNameConflict; an image that is
// not on the host gives one wrapping ErrImageNotFound and naming the image.
// When the start fails, the created container is removed again, so a failed
// CreateTask leaves nothing behind (unless that removal fails too, which the
// error then says).
//
// A spec with JoinNetwork makes a container in the network namespace of that
// container (network mode container:<name>). Docker checks the target only
// at the start: a target that does not exist gives an error wrapping
// api.ErrTaskNotFound, one that is not running an error wrapping
// api.ErrJoinTargetNotRunning, and in both cases nothing is left behind.
// Such a spec may have neither ports nor hostNetwork. A Mount of type
// api.MountVolume whose volume is missing makes Docker create it, with the
// mount's VolumeLabels.
//
// The returned task is read back with an inspect, so that its state and
// health are the engine's; if only that read fails, the task is built from
// the spec (running; health "starting" when the spec has a health check,
// else none) and no error is returned, because the container does exist.
func (d *Docker) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	config, hostConfig, err := containerConfig(spec, d.maxStopGrace)
	if err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
	}
	created, err := d.cli.ContainerCreate(ctx, config, hostConfig, nil, nil, spec.Name)
	switch {
	case err == nil:
	case cerrdefs.IsConflict(err):
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, api.ErrTaskNameConflict)
	case cerrdefs.IsNotFound(err) && strings.Contains(strings.ToLower(err.Error()), "no such image"):
		return api.Task{}, fmt.Errorf("create %s: %w: %s", spec.Name, ErrImageNotFound, spec.Container.Image)
	default:
		// Newer engines may check a network's target at the create.
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, joinError(spec, err))
	}

	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		err = joinError(spec, err)
		// ctx may be what failed the start: clean up with a context of our own.
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.stopTimeout)
		defer cancel()
		rmErr := d.cli.ContainerRemove(rmCtx, created.ID, container.RemoveOptions{Force: true})
		if rmErr != nil && !cerrdefs.IsNotFound(rmErr) {
			return api.Task{}, fmt.Errorf("start %s: %w (and removing it failed: %w)", spec.Name, err, rmErr)
		}
		return api.Task{}, fmt.Errorf("start %s: %w", spec.Name, err)
	}

	task, err := d.InspectTask(ctx, created.ID)
	if err != nil {
		now := time.Now()
		return api.Task{
			ID:        created.ID,
			Name:      spec.Name,
			Labels:    maps.Clone(spec.Labels),
			Image:     spec.Container.Image,
			State:     api.StateRunning,
			Health:    specHealth(spec.Container.HealthCheck),
			Created:   now,
			StartedAt: now,
		}, nil
	}
	return task, nil
}

// CheckImage returns nil when image is present on the host, else an error
// wrapping ErrImageNotFound and naming it. It never pulls: a caller asks
// before its first create of a template, so that a missing image costs one
// cheap call instead of a failed create per replica, and pulls it then.
func (d *Docker) CheckImage(ctx context.Context, image string) error {
	_, err := d.cli.ImageInspect(ctx, image)
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("%w: %s", ErrImageNotFound, image)
	default:
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
}

// RepoDigests returns the digests registries know the image id by, as
// the engine records them from its pulls and pushes ("name@sha256:..."):
// none for an image built on this engine and never pushed. An image that
// is gone gives an error wrapping ErrImageNotFound.
func (d *Docker) RepoDigests(ctx context.Context, id string) ([]string, error) {
	resp, err := d.cli.ImageInspect(ctx, id)
	switch {
	case err == nil:
		return resp.RepoDigests, nil
	case cerrdefs.IsNotFound(err):
		return nil, fmt.Errorf("%w: %s", ErrImageNotFound, id)
	default:
		return nil, fmt.Errorf("inspect image %s: %w", id, err)
	}
}

// DeleteTask stops the container gracefully and removes it. The stop is
// the one its create recorded in the engine (stopGracefully): its preStop
// (the api.LabelPreStop label), within its grace period (the engine's
// StopTimeout, else the node's, capped at MaxStopGrace), then its stop
// signal with the rest of the grace; the engine kills it after that. A
// container that is gone, or already being removed, is not an error. A
// preStop that failed gives an error wrapping api.ErrPreStopFailed once the
// container is removed all the same.
func (d *Docker) DeleteTask(ctx context.Context, id string) error {
	plan := stopPlan{Grace: capGrace(d.stopTimeout, d.maxStopGrace)}
	running := true
	switch resp, err := d.cli.ContainerInspect(ctx, id); {
	case cerrdefs.IsNotFound(err):
		return nil
	case err == nil && resp.ContainerJSONBase != nil:
		plan = d.stopPlanOf(resp)
		running = resp.State == nil || resp.State.Running || resp.State.Paused || resp.State.Restarting
	}
	// an inspect that failed otherwise: stop with the node's defaults
	var preStopErr, stopErr error
	if running {
		preStopErr, stopErr = stopGracefully(ctx, plan, stopHooks{
			now:   time.Now,
			sleep: sleepCtx,
			exec:  func(ctx context.Context, cmd []string) error { return d.exec(ctx, id, cmd) },
			signal: func(ctx context.Context, signal string, remaining time.Duration) error {
				timeout := wholeSeconds(remaining)
				return d.cli.ContainerStop(ctx, id, container.StopOptions{Signal: signal, Timeout: &timeout})
			},
		})
	}
	if cerrdefs.IsNotFound(stopErr) {
		return nil
	}
	if err := d.remove(ctx, id, stopErr); err != nil {
		return err
	}
	if preStopErr != nil {
		return fmt.Errorf("delete %s: %w", id, preStopErr)
	}
	return nil
}

// stopPlanOf is the stop that a container's create recorded in the
// engine: its stop signal and timeout, and its preStop label.
func (d *Docker) stopPlanOf(resp container.InspectResponse) stopPlan {
	p := stopPlan{Grace: d.stopTimeout}
	if c := resp.Config; c != nil {
		p.Signal = c.StopSignal
		if c.StopTimeout != nil && *c.StopTimeout >= 0 {
			p.Grace = time.Duration(*c.StopTimeout) * time.Second
		}
		p.PreStop = preStopOfLabels(c.Labels)
	}
	p.Grace = capGrace(p.Grace, d.maxStopGrace)
	return p
}

// exec runs cmd in container id through the engine's exec and waits for
// it to end; a non-zero exit is an error.
func (d *Docker) exec(ctx context.Context, id string, cmd []string) error {
	created, err := d.cli.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: cmd})
	if err != nil {
		return fmt.Errorf("exec create: %w", err)
	}
	if err := d.cli.ContainerExecStart(ctx, created.ID, container.ExecStartOptions{Detach: true}); err != nil {
		return fmt.Errorf("exec start: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := d.cli.ContainerExecInspect(ctx, created.ID)
		switch {
		case err != nil:
			return fmt.Errorf("exec inspect: %w", err)
		case !info.Running && info.ExitCode != 0:
			return fmt.Errorf("%w: code %d", errExecFailed, info.ExitCode)
		case !info.Running:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// remove force-removes container id after its stop, which failed with
// stopErr (nil when it did not).
func (d *Docker) remove(ctx context.Context, id string, stopErr error) error {
	// Remove even when the stop failed: Force kills what did not stop.
	err := d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		// With Force, the only conflict is "removal already in progress".
		return nil
	case stopErr != nil:
		return fmt.Errorf("delete %s: %w", id, errors.Join(stopErr, err))
	default:
		return fmt.Errorf("delete %s: %w", id, err)
	}
}

// RenameTask renames a container, for instance to move a dead container out
// of its slot while keeping it for inspection. A taken name gives an error
// wrapping api.ErrTaskNameConflict, a missing container one wrapping
// api.ErrTaskNotFound.
func (d *Docker) RenameTask(ctx context.Context, id, newName string) error {
	err := d.cli.ContainerRename(ctx, id, newName)
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("rename %s to %s: %w", id, newName, api.ErrTaskNameConflict)
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("rename %s to %s: %w", id, newName, api.ErrTaskNotFound)
	default:
		return fmt.Errorf("rename %s to %s: %w", id, newName, err)
	}
}

// InspectTask returns one container, by id or by name, with every field
// filled in exactly:
// StartedAt, FinishedAt, ExitCode and Health as the engine reports them,
// and CheckedAt, when it runs, the time the inspect was sent. A missing
// container gives an error wrapping api.ErrTaskNotFound.
func (d *Docker) InspectTask(ctx context.Context, id string) (api.Task, error) {
	asked := time.Now()
	resp, err := d.cli.ContainerInspect(ctx, id)
	switch {
	case err == nil:
	case cerrdefs.IsNotFound(err):
		return api.Task{}, fmt.Errorf("inspect %s: %w", id, api.ErrTaskNotFound)
	default:
		return api.Task{}, fmt.Errorf("inspect %s: %w", id, err)
	}
	return checked(taskFromInspect(resp), asked), nil
}

// checked is t as an answer sent at asked told it: a running container
// has run at least until then (api.Task.CheckedAt).
func checked(t api.Task, asked time.Time) api.Task {
	if t.State == api.StateRunning {
		t.CheckedAt = asked
	}
	return t
}

// Events streams the events of containers that carry the label key
// labelKey (every container when labelKey is empty). Each event tells what
// changed as far as the engine's event does: Action is Docker's action
// without its detail ("health_status: healthy" becomes "health_status",
// with Health "healthy"), Labels are the container's labels, and Name,
// Image, OldName, Time, ExitCode and Health come from the event's
// attributes and time (taskEvent).
//
// The stream ends when ctx is cancelled or the connection fails: the event
// channel is closed and the error channel delivers one error (wrapping
// ctx.Err() after a cancel) and is closed. The caller should then relist and
// call Events again. Events that happen while Events is being called are
// not lost: the engine replays those since the call.
func (d *Docker) Events(ctx context.Context, labelKey string) (<-chan api.TaskEvent, <-chan error) {
	args := filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)))
	if labelKey != "" {
		args.Add("label", labelKey)
	}
	// The engine answers the request before it subscribes; asking for the
	// events since now makes it replay what happened in between.
	since := time.Now().UTC().Format(time.RFC3339Nano)
	messages, errs := d.cli.Events(ctx, events.ListOptions{Since: since, Filters: args})

	out := make(chan api.TaskEvent)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		for {
			select {
			case m := <-messages:
				if m.Type != events.ContainerEventType {
					continue
				}
				select {
				case out <- taskEvent(m):
				case <-ctx.Done():
					errc <- fmt.Errorf("docker events: %w", ctx.Err())
					return
				}
			case err, ok := <-errs:
				if !ok {
					err = errors.New("stream closed")
				}
				errc <- fmt.Errorf("docker events: %w", err)
				return
			}
		}
	}()
	return out, errc
}

// eventAttributes are the attributes the engine adds to a container
// event's labels; they are not labels.
var eventAttributes = []string{"name", "image", "exitCode", "signal", "oldName", "execID", "execDuration"}

// taskEvent maps a Docker container event to a task event: the action
// without its detail, the container's labels, and what the attributes and
// the event's time tell (name, image, a rename's old name, a die's exit
// code, a health_status's health).
func taskEvent(m events.Message) api.TaskEvent {
	action, detail, _ := strings.Cut(string(m.Action), ":")
	attrs := m.Actor.Attributes
	labels := maps.Clone(attrs)
	for _, k := range eventAttributes {
		delete(labels, k)
	}
	ev := api.TaskEvent{
		Action:  action,
		ID:      m.Actor.ID,
		Labels:  labels,
		Name:    strings.TrimPrefix(attrs["name"], "/"),
		Image:   attrs["image"],
		OldName: strings.TrimPrefix(attrs["oldName"], "/"),
		Time:    eventTime(m),
	}
	switch action {
	case string(events.ActionDie):
		// engines before API 1.22 had no exitCode: 0, as inspect would
		// not do better for the crash count than the time
		ev.ExitCode, _ = strconv.Atoi(attrs["exitCode"])
	case string(events.ActionHealthStatus):
		switch h := strings.TrimSpace(detail); h {
		case api.HealthHealthy, api.HealthUnhealthy, api.HealthStarting:
			ev.Health = h
		}
	}
	return ev
}

// eventTime is when the engine logged m: timeNano, else time (seconds),
// else zero.
func eventTime(m events.Message) time.Time {
	switch {
	case m.TimeNano != 0:
		return time.Unix(0, m.TimeNano)
	case m.Time != 0:
		return time.Unix(m.Time, 0)
	}
	return time.Time{}
}

// joinError names the failure to start a container that joins another's
// network because of its target: the engine says no such container (not
// found) or that it does not run (a conflict). Other errors are returned as
// they are.
func joinError(spec api.TaskSpec, err error) error {
	switch {
	case spec.JoinNetwork == "":
		return err
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("join the network of %s: %w (%w)", spec.JoinNetwork, api.ErrTaskNotFound, err)
	case cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "non running"):
		return fmt.Errorf("join the network of %s: %w (%w)", spec.JoinNetwork, api.ErrJoinTargetNotRunning, err)
	}
	return err
}

// containerConfig builds the engine's configuration from a task spec. It
// copies what it keeps, so the spec (often a shared template) is never
// mutated.
//
// The container's stop is recorded in the engine, so that DeleteTask (and
// a `docker stop` by hand) honours it: its stop signal, its grace period
// (capped at maxGrace, when positive) as the StopTimeout, and its preStop
// in the api.LabelPreStop label.
func containerConfig(spec api.TaskSpec, maxGrace time.Duration) (*container.Config, *container.HostConfig, error) {
	if err := checkJoin(spec); err != nil {
		return nil, nil, err
	}
	c := spec.Container
	config := &container.Config{
		Image:      c.Image,
		WorkingDir: c.WorkingDir,
		Labels:     maps.Clone(spec.Labels),
		StopSignal: cmp.Or(c.StopSignal, api.DefaultStopSignal),
	}
	if g := c.StopGracePeriodSeconds; g != nil {
		timeout := wholeSeconds(capGrace(time.Duration(*g)*time.Second, maxGrace))
		config.StopTimeout = &timeout
	}
	if c.PreStop != nil {
		if config.Labels == nil {
			config.Labels = map[string]string{}
		}
		config.Labels[api.LabelPreStop] = preStopLabel(c.PreStop)
	}
	if len(c.Command) > 0 {
		config.Cmd = strslice.StrSlice(append([]string(nil), c.Command...))
	}
	for _, e := range c.Env {
		config.Env = append(config.Env, e.Name+"="+e.Value)
	}
	if hc := c.HealthCheck; hc != nil {
		config.Healthcheck = &container.HealthConfig{
			Test:        hc.ExplicitTest(),
			Interval:    time.Duration(hc.Interval),
			Timeout:     time.Duration(hc.Timeout),
			StartPeriod: time.Duration(hc.StartPeriod),
			Retries:     hc.Retries,
		}
	}
	hostConfig := &container.HostConfig{
		Resources:  container.Resources{Memory: c.Memory, CPUShares: c.CPU},
		Privileged: c.Privileged,
	}
	// The fields that weaken isolation were allowed (or refused) by
	// api.Validate's policy before the spec got here.
	if c.HostNetwork {
		hostConfig.NetworkMode = network.NetworkHost
	}
	if spec.JoinNetwork != "" {
		hostConfig.NetworkMode = container.NetworkMode(containerNetworkPrefix + spec.JoinNetwork)
	}
	if c.HostPID {
		hostConfig.PidMode = "host"
	}
	if c.HostIPC {
		hostConfig.IpcMode = "host"
	}
	// Mounts rather than Binds: a missing host path is an error instead of
	// a new root-owned directory on the host.
	for _, v := range c.Volumes {
		hostConfig.Mounts = append(hostConfig.Mounts, mount.Mount{
			Type: mount.TypeBind, Source: v.HostPath, Target: v.ContainerPath, ReadOnly: v.ReadOnly,
		})
	}
	for i, m := range spec.Mounts {
		dm := mount.Mount{Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly}
		switch m.Type {
		case api.MountVolume:
			dm.Type = mount.TypeVolume
			if len(m.VolumeLabels) > 0 {
				dm.VolumeOptions = &mount.VolumeOptions{Labels: maps.Clone(m.VolumeLabels)}
			}
		case api.MountBind:
			dm.Type = mount.TypeBind
		default:
			return nil, nil, fmt.Errorf("mounts[%d]: unknown type %q", i, m.Type)
		}
		hostConfig.Mounts = append(hostConfig.Mounts, dm)
	}
	for _, d := range c.Devices {
		dm := container.DeviceMapping{PathOnHost: d.HostPath, PathInContainer: d.ContainerPath, CgroupPermissions: d.Permissions}
		if dm.PathInContainer == "" {
			dm.PathInContainer = d.HostPath
		}
		if dm.CgroupPermissions == "" {
			dm.CgroupPermissions = "rwm"
		}
		hostConfig.Devices = append(hostConfig.Devices, dm)
	}
	if len(c.CapAdd) > 0 {
		hostConfig.CapAdd = strslice.StrSlice(append([]string(nil), c.CapAdd...))
	}
	for i, p := range c.Ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		port, err := nat.NewPort(proto, strconv.Itoa(p.ContainerPort))
		if err != nil {
			return nil, nil, fmt.Errorf("ports[%d]: %w", i, err)
		}
		if config.ExposedPorts == nil {
			config.ExposedPorts = nat.PortSet{}
		}
		config.ExposedPorts[port] = struct{}{}
		if p.HostPort == 0 {
			continue // exposed, not published
		}
		if hostConfig.PortBindings == nil {
			hostConfig.PortBindings = nat.PortMap{}
		}
		hostConfig.PortBindings[port] = append(hostConfig.PortBindings[port],
			nat.PortBinding{HostIP: p.HostIP, HostPort: strconv.Itoa(p.HostPort)})
	}
	return config, hostConfig, nil
}

// specHealth is the health of a new container made from a spec with the
// health check hc, as far as the spec tells: an image's own health check is
// not known here.
func specHealth(hc *api.HealthCheck) string {
	if hc == nil || hc.Disabled() {
		return api.HealthNone
	}
	return api.HealthStarting
}

// taskFromSummary maps one entry of the container list.
func taskFromSummary(c container.Summary) api.Task {
	return api.Task{
		ID:       c.ID,
		Name:     SummaryName(c.Names),
		Labels:   c.Labels,
		Image:    c.Image,
		ImageID:  c.ImageID,
		State:    c.State,
		Health:   statusHealth(c.Status),
		Created:  time.Unix(c.Created, 0),
		JoinedTo: joinedTo(c.HostConfig.NetworkMode),
	}
}

// SummaryName picks the container's own name from the names a container
// list gives, which also hold link aliases such as "/other/alias"; "" for
// a container being removed, which has none.
func SummaryName(names []string) string {
	for _, n := range names {
		if n = strings.TrimPrefix(n, "/"); !strings.Contains(n, "/") {
			return n
		}
	}
	if len(names) > 0 {
		return strings.TrimPrefix(names[0], "/")
	}
	return ""
}

// statusHealth reads the health from the list's status text, such as
// "Up 3 seconds (healthy)" or "Up 1 second (health: starting)".
func statusHealth(status string) string {
	switch {
	case strings.HasSuffix(status, "(health: starting)"):
		return api.HealthStarting
	case strings.HasSuffix(status, "(healthy)"):
		return api.HealthHealthy
	case strings.HasSuffix(status, "(unhealthy)"):
		return api.HealthUnhealthy
	}
	return api.HealthNone
}

// taskFromInspect maps an inspect response.
func taskFromInspect(resp container.InspectResponse) api.Task {
	var t api.Task
	if resp.ContainerJSONBase != nil {
		t.ID = resp.ID
		t.Name = strings.TrimPrefix(resp.Name, "/")
		t.Created = parseTime(resp.Created)
		t.Image = resp.Image // the image ID; replaced by the name below
		t.ImageID = resp.Image
		if s := resp.State; s != nil {
			t.State = s.Status
			t.StartedAt = parseTime(s.StartedAt)
			t.FinishedAt = parseTime(s.FinishedAt)
			t.ExitCode = s.ExitCode
			if s.Health != nil && s.Health.Status != container.NoHealthcheck {
				t.Health = s.Health.Status
				if n := len(s.Health.Log); n > 0 && s.Health.Log[n-1] != nil {
					t.HealthOutput = strings.TrimSpace(s.Health.Log[n-1].Output)
				}
			}
		}
	}
	if resp.ContainerJSONBase != nil && resp.HostConfig != nil {
		t.JoinedTo = joinedTo(string(resp.HostConfig.NetworkMode))
	}
	if resp.Config != nil {
		t.Labels = resp.Config.Labels
		t.Image = resp.Config.Image
	}
	return t
}

// parseTime parses the engine's RFC 3339 times; the engine's zero time
// ("0001-01-01T00:00:00Z") and garbage give the zero time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.IsZero() {
		return time.Time{}
	}
	return t
}

// Engine returns what the engine says of itself, for the node it is
// (docs/CONTRACT.md, Nodes): its name and id, and its machine's CPUs and
// memory.
func (d *Docker) Engine(ctx context.Context) (api.Engine, error) {
	info, err := d.cli.Info(ctx)
	if err != nil {
		return api.Engine{}, fmt.Errorf("docker info at %s: %w", d.cli.DaemonHost(), err)
	}
	return api.Engine{Name: info.Name, ID: info.ID, CPUs: info.NCPU, Memory: info.MemTotal}, nil
}
