package taskcontrol

// This file pulls images onto the engine, authenticated as `docker pull`
// would be on this host: from the Docker client configuration
// (DockerOptions.DockerConfig), its auths and credential helpers, read with
// the Docker CLI's own config package and matched by the image's registry
// host. Credentials are read at each pull and go nowhere but the engine.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/distribution/reference"
	"github.com/docker/cli/cli/config"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/pkg/jsonmessage"
)

// PullImage pulls image onto the engine and returns once the engine has
// it. The error carries the engine's own words (unauthorized, not found,
// the registry unreachable), or says why the credentials could not be
// read.
func (d *Docker) PullImage(ctx context.Context, ref string) error {
	auth, err := RegistryAuth(d.dockerConfig, ref)
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	stream, err := d.cli.ImagePull(ctx, ref, image.PullOptions{RegistryAuth: auth})
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	defer stream.Close()
	// the engine reports a failure that comes after the pull began in the
	// stream, not in the response's status
	if err := jsonmessage.DisplayJSONMessagesStream(stream, io.Discard, 0, false, nil); err != nil {
		var jm *jsonmessage.JSONError
		if errors.As(err, &jm) {
			return fmt.Errorf("pull %s: %s", ref, jm.Message)
		}
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	return nil
}

// RegistryAuth returns the encoded credentials (the engine's X-Registry-Auth)
// that the Docker client configuration in dir holds for ref's registry
// host, its auths or a credential helper; empty when it holds none. An
// empty dir means $DOCKER_CONFIG, else ~/.docker, as the docker CLI reads
// it.
func RegistryAuth(dir, ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image reference: %w", err)
	}
	cf, err := config.Load(dir)
	if err != nil {
		return "", fmt.Errorf("docker config: %w", err)
	}
	host := reference.Domain(named)
	ac, err := cf.GetAuthConfig(host)
	if err != nil {
		return "", fmt.Errorf("credentials for %s from %s: %w", host, cf.Filename, err)
	}
	if ac.Username == "" && ac.Password == "" && ac.Auth == "" && ac.IdentityToken == "" && ac.RegistryToken == "" {
		return "", nil
	}
	return registry.EncodeAuthConfig(registry.AuthConfig{
		Username:      ac.Username,
		Password:      ac.Password,
		Auth:          ac.Auth,
		ServerAddress: ac.ServerAddress,
		IdentityToken: ac.IdentityToken,
		RegistryToken: ac.RegistryToken,
	})
}
