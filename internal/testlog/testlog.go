// Package testlog is the logger of the registry's tests: silent, unless
// REGISTRY_TEST_LOG is set (REGISTRY_TEST_LOG=1 go test -v), which logs
// everything, debug included, on stderr.
package testlog

import (
	"io"
	"log/slog"
	"os"
)

// Logger returns the tests' logger.
func Logger() *slog.Logger {
	if os.Getenv("REGISTRY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
