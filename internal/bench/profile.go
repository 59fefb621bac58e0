package bench

// This file summarises the pprof profiles of the parts that missed their
// target with `go tool pprof -top`, for the document.

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// profileLines is how many lines of `pprof -top` the document keeps: the
// header and the heaviest functions.
const profileLines = 22

// pprofTop returns the head of `go tool pprof -top` of a profile, with
// extra pprof flags, keeping the header and the lines keep accepts (all
// when keep is nil).
func pprofTop(ctx context.Context, file string, flags []string, keep func(line string) bool) (string, error) {
	args := append([]string{"tool", "pprof", "-top", "-nodecount=30"}, flags...)
	cmd := exec.CommandContext(ctx, "go", append(args, file)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w: %s", file, err, strings.TrimSpace(stderr.String()))
	}
	var lines []string
	body := false
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if !body || keep == nil || keep(line) {
			lines = append(lines, line)
		}
		// the table's header line ends the header
		body = body || strings.Contains(line, "flat%")
	}
	if len(lines) > profileLines {
		lines = lines[:profileLines]
	}
	return strings.Join(lines, "\n"), nil
}

// summariseProfiles returns the profiles of the scale and nodes parts
// whose rows missed their target.
func summariseProfiles(ctx context.Context, rows []Row, scale []ScaleResult, nodes *NodesResult) ([]ProfileSummary, error) {
	var out []ProfileSummary
	for _, r := range missed(rows) {
		if strings.HasPrefix(r.Part, nodesPartPrefix) {
			file := ""
			if nodes != nil {
				file = nodes.Profiles[nodesProfileOf(r.Measure)]
			}
			if file == "" {
				continue
			}
			top, err := pprofTop(ctx, file, nil, nil)
			if err != nil {
				return out, err
			}
			out = append(out, ProfileSummary{Target: "scheduler over nodes: " + strings.TrimSpace(r.Measure), File: file, Top: top})
			continue
		}
		for _, s := range scale {
			if !strings.Contains(r.Part, fmt.Sprintf("%d controllers", s.Controllers)) {
				continue
			}
			part, flags := profileOf(r.Measure)
			if part == "" {
				continue
			}
			file := s.Profiles[part]
			if file == "" {
				continue
			}
			top, err := pprofTop(ctx, file, flags, nil)
			if err != nil {
				return out, err
			}
			out = append(out, ProfileSummary{Target: fmt.Sprintf("%d controllers: %s", s.Controllers, r.Measure), File: file, Top: top})
		}
	}
	return out, nil
}

// nodesProfileOf names the CPU profile that explains a targeted row of the
// nodes part.
func nodesProfileOf(measure string) string {
	measure = strings.TrimSpace(measure)
	switch {
	case strings.HasPrefix(measure, "first assignment"):
		return "first"
	case strings.HasPrefix(measure, "reassignment of a dead node: "):
		return "reassign"
	case strings.HasPrefix(measure, "steady state"):
		return "steady"
	}
	return ""
}

// profileOf names the profile that explains a row of the scale part, and
// the pprof flags that read it.
func profileOf(measure string) (part string, flags []string) {
	measure = strings.TrimSpace(measure)
	switch {
	case strings.HasPrefix(measure, "every status says all replicas ready"):
		return "converge", nil
	case strings.HasPrefix(measure, "the node's full resync"):
		return "resync", nil
	case strings.HasPrefix(measure, "spec write → the node's first create"):
		return "events", nil
	case strings.HasPrefix(measure, "first create, while the node's full resyncs run"):
		return "events-busy", nil
	case strings.HasPrefix(measure, "first create, while every controller rolls out"):
		return "rollout", nil
	case strings.HasPrefix(measure, "a steady period"):
		return "steady", nil
	case strings.HasPrefix(measure, "resident memory of the host's process"):
		return "heap-bare", []string{"-sample_index=inuse_space"}
	}
	return "", nil
}
