package bench

// This file is the convergence of an image the engine must pull (part
// "pull", issue 27): a registry of this machine (internal/registrytest, on
// a free port of 127.0.0.1) holds an image whose layers no other image on
// the engine has (buildPullImage), and before each 0→N its reference is
// removed from the engine again. Then the manager scales a new controller
// of it 0→N (it pulls once, beside the sync, and creates), and the engine
// driven directly runs N parallel `docker run -d` of it as the docker CLI
// does (each create fails with "No such image", pulls, creates again: the
// engine joins the pulls), in rounds as the convergence part.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/registrytest"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// measurePull starts the registry, pushes the part's image there and runs
// the rounds.
func (e *dockerEnv) measurePull(ctx context.Context, cfg Config, res *DockerResults) error {
	local := e.image + "-pull"
	layer, err := e.setupPull(ctx, local)
	if err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	pr := &PullConvergenceResult{Replicas: cfg.Replicas, Image: e.pullRef}
	res.Pull = pr
	manager := e.managerSystem("pull", e.pullRef, demospec.Controller, &pr.ManagerVersusRaw)
	raw := e.rawSystem("pull", &pr.ManagerVersusRaw, func(id string, slot int, labels map[string]string) rawTask {
		return plainTask(id, slot, e.pullRef, labels, true)
	})
	// before each 0→N: the engine lacks the image and every layer of it
	manager.before = func(ctx context.Context, _ int) error {
		if err := registrytest.RemoveRef(ctx, e.pullRef); err != nil {
			return err
		}
		return lacksLayer(ctx, e.cli, layer)
	}
	raw.before = manager.before
	fmt.Fprintf(e.progress, "pull: 0→%d of %s, pulled each round, manager and raw Docker, %d rounds\n", cfg.Replicas, e.pullRef, cfg.Rounds)
	return e.convergeRounds(ctx, []*system{manager, raw}, cfg.Rounds, cfg.Replicas, 1, &pr.ManagerDockerCalls)
}

// setupPull starts the registry, its storage in the run's temporary
// directory, builds the part's image as local, pushes it and removes local
// again. It returns the diff id of the image's first layer. Teardown undoes
// each step that began, whatever failed.
func (e *dockerEnv) setupPull(ctx context.Context, local string) (string, error) {
	fmt.Fprintf(e.progress, "pull: starting a registry (%s)\n", registrytest.Module)
	var err error
	if e.registry, err = registrytest.Serve(ctx, filepath.Join(e.tempDir, "registry"), registrytest.Options{}); err != nil {
		return "", err
	}
	e.extraImages = append(e.extraImages, local)
	if err := buildPullImage(ctx, local, e.image, filepath.Join(e.tempDir, "pull-image")); err != nil {
		return "", err
	}
	e.pullRef = e.registry.Ref("rm-bench-pull:" + e.runID)
	fmt.Fprintf(e.progress, "pull: pushing %s\n", e.pullRef)
	if err := registrytest.PushRef(ctx, local, e.pullRef, ""); err != nil {
		return "", err
	}
	resp, err := e.cli.ImageInspect(ctx, local)
	switch {
	case err != nil:
		return "", fmt.Errorf("inspect image %s: %w", local, err)
	case len(resp.RootFS.Layers) == 0:
		return "", fmt.Errorf("image %s has no layers", local)
	}
	return resp.RootFS.Layers[0], removeImage(ctx, e.cli, local)
}

// pullImage pulls ref as `docker pull` does, with the credentials of the
// Docker client configuration ($DOCKER_CONFIG, else ~/.docker), and
// returns once the engine has it.
func pullImage(ctx context.Context, cli *client.Client, ref string) error {
	auth, err := taskcontrol.RegistryAuth("", ref)
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	stream, err := cli.ImagePull(ctx, ref, image.PullOptions{RegistryAuth: auth})
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	defer stream.Close()
	// a failure after the pull began is in the stream, not the status
	if err := jsonmessage.DisplayJSONMessagesStream(stream, io.Discard, 0, false, nil); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	return nil
}

// buildPullImage builds tag FROM scratch: first a layer of its own (a file
// holding tag), then the task binary of base and its CMD. No other image
// has the first layer, so no image on the engine has any of tag's layers
// (a layer is stored by its chain, which starts with the first): a pull
// of tag must fetch them all. dir is a directory for the build context.
func buildPullImage(ctx context.Context, tag, base, dir string) error {
	dockerfile := fmt.Sprintf("FROM %s AS task\nFROM scratch\nCOPY id /rm-bench-image\nCOPY --from=task /task /task\nCMD [\"/task\"]\n", base)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	for name, text := range map[string]string{"Dockerfile": dockerfile, "id": tag + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("build image %s: %w", tag, err)
		}
	}
	// the legacy builder, as scripts/build-image.sh uses it
	cmd := exec.CommandContext(ctx, "docker", "build", "--quiet", "--tag", tag, dir)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build image %s: %w\n%s", tag, err, out)
	}
	return nil
}

// lacksLayer returns an error naming the image that holds layer (a diff
// id) when one on the engine does.
func lacksLayer(ctx context.Context, cli *client.Client, layer string) error {
	list, err := cli.ImageList(ctx, image.ListOptions{All: true})
	if err != nil {
		return fmt.Errorf("list images: %w", err)
	}
	for _, s := range list {
		resp, err := cli.ImageInspect(ctx, s.ID)
		switch {
		case cerrdefs.IsNotFound(err):
			continue // removed meanwhile
		case err != nil:
			return fmt.Errorf("inspect image %.19s: %w", s.ID, err)
		}
		if slices.Contains(resp.RootFS.Layers, layer) {
			return fmt.Errorf("image %.19s %v on the engine holds layer %s: a pull would fetch nothing", s.ID, s.RepoTags, layer)
		}
	}
	return nil
}
