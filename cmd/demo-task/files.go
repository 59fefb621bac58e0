package main

// This file holds the task's two file modes, for init containers and the
// health checks that need what they made:
//
//	task write PATH [TEXT]   writes TEXT (default "ready") and a newline to PATH, prints it, exits 0
//	task exists PATH         exits 0 when PATH exists, 1 otherwise
//
// An image built FROM scratch has no shell to do either.

import (
	"fmt"
	"io"
	"os"
)

// writeFile is `task write PATH [TEXT]`.
func writeFile(args []string, stdout io.Writer) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("write: want PATH [TEXT], got %q", args)
	}
	text := "ready"
	if len(args) == 2 {
		text = args[1]
	}
	if err := os.WriteFile(args[0], []byte(text+"\n"), 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %q to %s\n", text, args[0])
	return nil
}

// fileExists is `task exists PATH`.
func fileExists(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("exists: want PATH, got %q", args)
	}
	if _, err := os.Stat(args[0]); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("exists: %v", err)}
	}
	return nil
}
