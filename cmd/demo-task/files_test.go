package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteThenExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ready")
	var out strings.Builder
	if err := fileExists([]string{path}); exitCode(err, &out) != 1 {
		t.Errorf("exists of a missing file: %v, want exit code 1", err)
	}
	if err := run(t.Context(), []string{"write", path, "hello"}, &out, &out); err != nil {
		t.Fatalf("write: %v", err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "hello\n" {
		t.Errorf("file = %q, %v; want \"hello\\n\"", got, err)
	}
	if err := run(t.Context(), []string{"exists", path}, &out, &out); err != nil {
		t.Errorf("exists of the written file: %v", err)
	}
	if err := run(t.Context(), []string{"write"}, &out, &out); err == nil {
		t.Error("write without a path: no error")
	}
	var ee *exitError
	if err := run(t.Context(), []string{"write", filepath.Join(path, "under-a-file")}, &out, &out); err == nil || errors.As(err, &ee) {
		t.Errorf("write where no file can be: %v, want an error", err)
	}
}
