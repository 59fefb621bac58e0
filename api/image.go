package api

// This file is what the manager tells of the images containers run
// (docs/CONTRACT.md, Images): the image ID fixed at each container's
// create, and the digest a registry knows it by.

import (
	"strings"

	"github.com/distribution/reference"
)

// RunningImage is one image a controller's containers run, as its status
// sums the nodes' reports.
type RunningImage struct {
	// Image is the reference the containers were created from, as the
	// template gives it.
	Image string `json:"image"`
	// ImageID is the engine's ID of the image ("sha256:...").
	ImageID string `json:"imageID"`
	// RepoDigest is the digest a registry knows the image by
	// ("nginx@sha256:..."), when a node's engine knows one.
	RepoDigest string `json:"repoDigest,omitempty"`
	// Containers counts the live containers that run it.
	Containers int `json:"containers"`
}

// shortIDLen is how many hex digits of an image ID ShortImageID keeps, as
// `docker images` shows them.
const shortIDLen = 12

// ShortImageID is an image ID as `docker images` shows it: the first 12
// hex digits, without the "sha256:" prefix. Anything else is returned as
// it is.
func ShortImageID(id string) string {
	hex, ok := strings.CutPrefix(id, "sha256:")
	if !ok || len(hex) <= shortIDLen {
		return id
	}
	return hex[:shortIDLen]
}

// RepoDigestFor picks, of an image's repo digests as the engine lists
// them ("name@sha256:..."), the one of image's repository; when none is,
// the first, since the image is the same whichever registry holds it; ""
// for none.
func RepoDigestFor(image string, digests []string) string {
	if len(digests) == 0 {
		return ""
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return digests[0]
	}
	for _, d := range digests {
		name, _, _ := strings.Cut(d, "@")
		if dn, err := reference.ParseNormalizedNamed(name); err == nil && dn.Name() == named.Name() {
			return d
		}
	}
	return digests[0]
}
