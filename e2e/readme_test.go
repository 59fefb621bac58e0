package e2e

// The README's walkthrough as data: the commands of the first sh block of
// a section, in order, each with the line it is on and the text a test keys
// its expectations by. Nothing here runs a command.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/internal/dockertest"
)

// readmeCommand is one command of a README code block.
type readmeCommand struct {
	line    int    // README.md's line number of its first line
	text    string // the command as a shell runs it, its comment included
	command string // the command without its trailing comment, trimmed: the key of its expectation
}

// readmeCommands returns the commands of the first ```sh block after the
// heading "## <section>" of the module's README.md, in order. Lines that
// are only a comment or blank are no command; a line ending in a backslash
// continues on the next.
func readmeCommands(t *testing.T, section string) []readmeCommand {
	t.Helper()
	root, err := dockertest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := parseShBlock(string(data), section)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return cmds
}

// parseShBlock is readmeCommands on the README's text.
func parseShBlock(readme, section string) ([]readmeCommand, error) {
	lines := strings.Split(readme, "\n")
	heading := "## " + section
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) != heading {
		i++
	}
	if i == len(lines) {
		return nil, fmt.Errorf("no heading %q", heading)
	}
	for i < len(lines) && strings.TrimSpace(lines[i]) != "```sh" {
		if i > 0 && strings.HasPrefix(lines[i], "## ") && strings.TrimSpace(lines[i]) != heading {
			return nil, fmt.Errorf("no ```sh block under %q", heading)
		}
		i++
	}
	if i == len(lines) {
		return nil, fmt.Errorf("no ```sh block under %q", heading)
	}
	var cmds []readmeCommand
	var cur *readmeCommand
	for i++; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "```" {
			if cur != nil {
				return nil, fmt.Errorf("line %d: the block ends in a continued line", cur.line)
			}
			return cmds, nil
		}
		if cur == nil {
			if code := strings.TrimSpace(withoutComment(line)); code == "" {
				continue // a comment or a blank line
			}
			cmds = append(cmds, readmeCommand{line: i + 1})
			cur = &cmds[len(cmds)-1]
		}
		code := withoutComment(line)
		if cont, ok := strings.CutSuffix(strings.TrimRight(code, " \t"), `\`); ok && code == line {
			cur.text += line + "\n"
			cur.command += strings.TrimSpace(cont) + " "
			continue
		}
		cur.text += line
		cur.command = strings.TrimSpace(cur.command + strings.TrimSpace(code))
		cur = nil
	}
	return nil, fmt.Errorf("the ```sh block under %q has no end", heading)
}

// withoutComment returns line up to its comment: a # at the start or after
// a space, outside quotes, as a shell reads it.
func withoutComment(line string) string {
	var quote rune
	prev := ' '
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return line[:i]
		}
		prev = r
	}
	return line
}

func TestParseShBlockKeysCommandsWithoutTheirComments(t *testing.T) {
	readme := strings.Join([]string{
		"# title",
		"## Other",
		"```sh",
		"not this",
		"```",
		"## Walk",
		"text",
		"```sh",
		"# a comment",
		"bin/rcctl get   # the list",
		"",
		"echo '{\"a\":\"# not a comment\"}' | wc -c",
		"bin/rcctl get -o jsonpath='{.items[?(@.x==1)]}'#glued",
		"docker ps \\",
		"  --all",
		"```",
	}, "\n")
	got, err := parseShBlock(readme, "Walk")
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeCommand{
		{line: 10, text: "bin/rcctl get   # the list", command: "bin/rcctl get"},
		{line: 12, text: `echo '{"a":"# not a comment"}' | wc -c`, command: `echo '{"a":"# not a comment"}' | wc -c`},
		{line: 13, text: "bin/rcctl get -o jsonpath='{.items[?(@.x==1)]}'#glued", command: "bin/rcctl get -o jsonpath='{.items[?(@.x==1)]}'#glued"},
		{line: 14, text: "docker ps \\\n  --all", command: "docker ps --all"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d commands %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if _, err := parseShBlock(readme, "Missing"); err == nil {
		t.Error("a missing section gave no error")
	}
}
