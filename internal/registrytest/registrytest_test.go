package registrytest_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/registrytest"
)

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m)) }

// A pushed image can be pulled back by the engine with the right
// credentials only, and the push leaves no local tag behind.
func TestPushedImagePullsBackOnlyWithCredentials(t *testing.T) {
	image := dockertest.DemoImage(t)
	reg := registrytest.Start(t, registrytest.Options{User: "alice", Password: "s3cret"})
	good := reg.DockerConfig(t, "alice", "s3cret")
	ref := reg.Push(t, image, "demo/pushed:"+dockertest.RunID(), good)

	if out, err := exec.Command("docker", "image", "inspect", ref).CombinedOutput(); err == nil {
		t.Fatalf("the pushed tag is still on the engine: %s", out)
	}
	if out, err := exec.Command("docker", "--config", reg.DockerConfig(t, "", ""), "pull", ref).CombinedOutput(); err == nil {
		t.Fatalf("pull without credentials succeeded: %s", out)
	}
	if out, err := exec.Command("docker", "--config", good, "pull", ref).CombinedOutput(); err != nil {
		t.Fatalf("pull with credentials: %v: %s", err, out)
	}
	registrytest.RemoveLocal(t, ref)
	if out, _ := exec.Command("docker", "image", "ls", "--digests", "--filter", "reference="+reg.Host+"/demo/pushed", "-q").Output(); len(out) > 0 {
		t.Errorf("the pulled image is still on the engine under its repository: %s", out)
	}
}
