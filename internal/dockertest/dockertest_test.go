package dockertest_test

import (
	"os"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/replication-manager/replication-manager/internal/dockertest"
)

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m)) }

func TestLabelsRemoveTheTestsContainers(t *testing.T) {
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)

	var labels map[string]string
	t.Run("creates", func(t *testing.T) {
		labels = dockertest.Labels(t)
		if labels[dockertest.RunLabel] != dockertest.RunID() || labels[dockertest.TestLabel] == "" {
			t.Fatalf("Labels: got %v, want the run's and the test's", labels)
		}
		for range 2 {
			if _, err := cli.ContainerCreate(t.Context(), &container.Config{Image: image, Labels: labels}, nil, nil, nil, ""); err != nil {
				t.Fatalf("ContainerCreate: %v", err)
			}
		}
	})

	list, err := cli.ContainerList(t.Context(), container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", dockertest.TestLabel+"="+labels[dockertest.TestLabel])),
	})
	if err != nil {
		t.Fatalf("ContainerList: %v", err)
	}
	if len(list) != 0 {
		t.Errorf("after the subtest: %d of its containers remain, want none", len(list))
	}
}
