package dockertest

// This file makes the images of tests about image identity: a tag of its
// own for an image, and a variant of an image that differs only by a
// label, so that it has an image ID of its own, built from the local image
// without a registry. Every tag made here is removed when the test ends
// and again at the end of the run (Main), once the run's containers are
// gone; an image left without a tag goes with its last one.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
)

// Tag tags the image src (a reference or an ID) as tag, moving tag if it
// names another image, and returns the ID of src. It skips the test as
// RequireDocker does.
func Tag(tb testing.TB, src, tag string) string {
	tb.Helper()
	cli := Client(tb)
	removeAtEnd(tb, tag)
	if err := cli.ImageTag(tb.Context(), src, tag); err != nil {
		tb.Fatalf("tag %s as %s: %v", src, tag, err)
	}
	return ImageID(tb, tag)
}

// VariantImage builds from the local image base an image tagged tag that
// differs from it only by the label rmtest.variant=<tag>, and returns its
// ID. Nothing is pulled: base is on the engine, and the legacy builder
// needs no other image. It skips the test as RequireDocker does.
func VariantImage(tb testing.TB, base, tag string) string {
	tb.Helper()
	RequireDocker(tb)
	removeAtEnd(tb, tag)
	ctx, cancel := context.WithTimeout(tb.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "build", "--quiet", "--tag", tag, "-")
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0") // as scripts/build-image.sh: no buildx here
	cmd.Stdin = strings.NewReader(fmt.Sprintf("FROM %s\nLABEL rmtest.variant=%q\n", base, tag))
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build %s from %s: %v\n%s", tag, base, err, out)
	}
	return ImageID(tb, tag)
}

// ImageID returns the ID of the image ref names on the engine now.
func ImageID(tb testing.TB, ref string) string {
	tb.Helper()
	resp, err := Client(tb).ImageInspect(tb.Context(), ref)
	if err != nil {
		tb.Fatalf("inspect image %s: %v", ref, err)
	}
	return resp.ID
}

// removeAtEnd removes tag when the test ends, and at the end of the run
// should that fail (a container of the test still ran its image).
func removeAtEnd(tb testing.TB, tag string) {
	tb.Helper()
	usedMu.Lock()
	images = append(images, tag)
	usedMu.Unlock()
	cli := Client(tb)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), cleanupTimeout) // tb.Context() ends before cleanups run
		defer cancel()
		_, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true})
		if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			tb.Errorf("remove image %s: %v", tag, err)
		}
	})
}
