package api_test

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestRepoDigestForPicksTheImagesOwnRepository(t *testing.T) {
	const (
		hub   = "nginx@sha256:1111111111111111111111111111111111111111111111111111111111111111"
		local = "localhost:5000/nginx@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	)
	tests := []struct {
		image   string
		digests []string
		want    string
	}{
		{"nginx:1.27", []string{local, hub}, hub},
		{"docker.io/library/nginx:1.27", []string{local, hub}, hub},
		{"localhost:5000/nginx:1.27", []string{hub, local}, local},
		{"mirror.example/nginx:1.27", []string{local, hub}, local}, // the same image, known by another registry
		{"nginx:1.27", nil, ""},
	}
	for _, tt := range tests {
		if got := api.RepoDigestFor(tt.image, tt.digests); got != tt.want {
			t.Errorf("RepoDigestFor(%q, %q) = %q, want %q", tt.image, tt.digests, got, tt.want)
		}
	}
}

func TestShortImageID(t *testing.T) {
	for id, want := range map[string]string{
		"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": "0123456789ab",
		"sha256:0123": "sha256:0123",
		"":            "",
	} {
		if got := api.ShortImageID(id); got != want {
			t.Errorf("ShortImageID(%q) = %q, want %q", id, got, want)
		}
	}
}
