package registrytest

// This file pushes locally built images to a Registry with the docker CLI,
// as a user would, and removes every tag it made when the test ends.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distribution/reference"
)

// DockerConfig writes a Docker client configuration directory (what
// `docker --config DIR` and the daemon's --docker-config read) whose auths
// hold user and password for the registry, and returns it. An empty user
// writes a configuration without auths.
func (r *Registry) DockerConfig(tb testing.TB, user, password string) string {
	tb.Helper()
	dir := tb.TempDir()
	cfg := map[string]any{"auths": map[string]any{}}
	if user != "" {
		cfg["auths"] = map[string]any{r.Host: map[string]string{
			"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password)),
		}}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Push tags the local image as repoTag in the registry, pushes it with the
// docker CLI reading dockerConfig (empty: a configuration without auths),
// and removes the local tag again, so that the engine has to pull it back.
// It returns the pushed reference; the test's cleanup removes that
// reference from the engine too, should a pull have brought it back.
func (r *Registry) Push(tb testing.TB, local, repoTag, dockerConfig string) string {
	tb.Helper()
	ref := r.Ref(repoTag)
	if dockerConfig == "" {
		dockerConfig = r.DockerConfig(tb, "", "")
	}
	tb.Cleanup(func() { RemoveLocal(tb, ref) })
	if err := PushRef(tb.Context(), local, ref, dockerConfig); err != nil {
		tb.Fatal(err)
	}
	return ref
}

// PushRef is Push for a program: it tags the local image as ref, pushes it
// with the docker CLI reading dockerConfig (empty: the CLI's own, as
// `docker push` finds it) and removes ref from the engine again
// (RemoveRef). The local image keeps its other tags.
func PushRef(ctx context.Context, local, ref, dockerConfig string) error {
	if err := docker(ctx, "", "tag", local, ref); err != nil {
		return err
	}
	if err := docker(ctx, dockerConfig, "push", "--quiet", ref); err != nil {
		return errors.Join(err, RemoveRef(ctx, ref))
	}
	return RemoveRef(ctx, ref)
}

// RemoveLocal removes an image reference from the engine, and every
// digest reference of its repository that pulls left (RemoveRef), within
// a minute; a failure fails the test.
func RemoveLocal(tb testing.TB, ref string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), time.Minute) // also in a cleanup, after tb.Context() ended
	defer cancel()
	if err := RemoveRef(ctx, ref); err != nil {
		tb.Error(err)
	}
}

// RemoveRef removes an image reference from the engine, and every digest
// reference of its repository that pulls left (a pulled image keeps
// repo@sha256:... after its tag goes, which would keep the image); the
// image itself goes once no other tag holds it. One that is gone is not an
// error.
func RemoveRef(ctx context.Context, ref string) error {
	var errs []error
	refs := []string{ref}
	if named, err := reference.ParseNormalizedNamed(ref); err == nil {
		out, err := exec.CommandContext(ctx, "docker", "image", "ls", "--digests", "--filter", "reference="+named.Name(),
			"--format", "{{.Repository}}@{{.Digest}}").Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("list the digests of %s: %w", named.Name(), err))
		}
		for _, line := range strings.Fields(string(out)) {
			if !strings.HasSuffix(line, "@<none>") && !slices.Contains(refs, line) {
				refs = append(refs, line)
			}
		}
	}
	for _, r := range refs {
		if err := docker(ctx, "", "image", "rm", r); err != nil && !strings.Contains(err.Error(), "No such image") {
			errs = append(errs, fmt.Errorf("remove %s: %w", r, err))
		}
	}
	return errors.Join(errs...)
}

// docker runs the docker CLI, with --config when configDir is set.
func docker(ctx context.Context, configDir string, args ...string) error {
	if configDir != "" {
		args = append([]string{"--config", configDir}, args...)
	}
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
