package bench

// This file is `docker run -d` of an image the engine lacks, as the docker
// CLI does it: the create fails with "No such image", the image is pulled
// with the credentials `docker pull` would use, and the create is tried
// again. It also builds the image of the pull part, whose layers no other
// image on the engine shares.

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

	"github.com/replication-manager/replication-manager/taskcontrol"
)

// runFunc runs one container of img named name with labels and returns its
// id: runContainer, or runPulling.
type runFunc func(ctx context.Context, cli *client.Client, img, name string, labels map[string]string) (string, error)

// runPulling is runContainer that pulls img when the engine lacks it, as
// `docker run -d` does.
func runPulling(ctx context.Context, cli *client.Client, img, name string, labels map[string]string) (string, error) {
	id, err := runContainer(ctx, cli, img, name, labels)
	if id != "" || !cerrdefs.IsNotFound(err) {
		return id, err
	}
	if err := pullImage(ctx, cli, img); err != nil {
		return "", fmt.Errorf("run %s: %w", name, err)
	}
	return runContainer(ctx, cli, img, name, labels)
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

// firstLayer is the diff id of img's first layer.
func firstLayer(ctx context.Context, cli *client.Client, img string) (string, error) {
	resp, err := cli.ImageInspect(ctx, img)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", img, err)
	}
	if len(resp.RootFS.Layers) == 0 {
		return "", fmt.Errorf("image %s has no layers", img)
	}
	return resp.RootFS.Layers[0], nil
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
