package taskcontrol_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/registry"

	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/registrytest"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// The credentials of a Docker client configuration are those of the
// image's registry host, and none for another host.
func TestRegistryAuthPicksTheImagesRegistryHost(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"auths": {"reg.example:5000": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("alice:s3cret")) + `"}}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	enc, err := taskcontrol.RegistryAuth(dir, "reg.example:5000/team/app:1")
	if err != nil {
		t.Fatal(err)
	}
	ac, err := registry.DecodeAuthConfig(enc)
	if err != nil {
		t.Fatal(err)
	}
	if ac.Username != "alice" || ac.Password != "s3cret" {
		t.Errorf("credentials %+v, want alice's", ac)
	}
	for _, ref := range []string{"other.example/app:1", "app:1"} {
		if enc, err := taskcontrol.RegistryAuth(dir, ref); err != nil || enc != "" {
			t.Errorf("%s: %q, %v; want no credentials", ref, enc, err)
		}
	}
	if _, err := taskcontrol.RegistryAuth(t.TempDir(), "app:1"); err != nil {
		t.Errorf("a directory without config.json: %v, want no credentials and no error", err)
	}
}

// A pull from a registry that wants a user fails in the engine's words
// without credentials and succeeds with them.
func TestPullImageUsesTheDockerConfigsCredentials(t *testing.T) {
	image := dockertest.DemoImage(t)
	reg := registrytest.Start(t, registrytest.Options{User: "bob", Password: "pw-" + dockertest.RunID()})
	good := reg.DockerConfig(t, "bob", "pw-"+dockertest.RunID())
	ref := reg.Push(t, image, "taskcontrol/pull:"+dockertest.RunID(), good)

	without, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{DockerConfig: reg.DockerConfig(t, "", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer without.Close()
	err = without.PullImage(t.Context(), ref)
	if err == nil || !strings.Contains(err.Error(), "auth") {
		t.Fatalf("pull without credentials: %v, want the engine's words about auth", err)
	}

	with, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{DockerConfig: good})
	if err != nil {
		t.Fatal(err)
	}
	defer with.Close()
	if err := with.PullImage(t.Context(), ref); err != nil {
		t.Fatalf("pull with credentials: %v", err)
	}
	if err := with.CheckImage(t.Context(), ref); err != nil {
		t.Errorf("after the pull: %v", err)
	}
}
