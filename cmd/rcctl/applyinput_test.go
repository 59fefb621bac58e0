package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// yamlOf is the YAML of newController(id, replicas), as get -o yaml prints it.
func yamlOf(t *testing.T, id string, replicas int) string {
	t.Helper()
	data, err := ctlviewYAML(newController(id, replicas))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestApplyTakesSeveralFilesInOrder(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	a := writeFile(t, "b-web.json", encode(t, newController("web", 3)))
	b := writeFile(t, "a-api.yaml", yamlOf(t, "api", 2))

	r := e.run("", "apply", "-f", a, "-f", b)

	assertStdout(t, r, "controller \"web\" created\ncontroller \"api\" created\n")
	if n := e.get("api").Controller.DesiredState.Replicas; n != 2 {
		t.Errorf("api: stored replicas %d, want 2", n)
	}
}

func TestApplyOfADirectoryReadsItsSpecFilesInNameOrder(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"2-web.json":       encode(t, newController("web", 3)),
		"1-api.yml":        yamlOf(t, "api", 1),
		"3-more.YAML":      yamlOf(t, "more", 1),
		"README.md":        "not a spec",
		"notes.txt":        "{",
		"sub/4-deep.json":  encode(t, newController("deep", 1)),
		"dir.json/x.json":  encode(t, newController("x", 1)),
		"0-empty-doc.yaml": "# nothing but a comment\n---\n" + yamlOf(t, "zero", 1),
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	r := e.run("", "apply", "-f", dir)

	assertStdout(t, r, "controller \"zero\" created\ncontroller \"api\" created\ncontroller \"web\" created\ncontroller \"more\" created\n")

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "apply", "-f", empty)
	assertFails(t, r, "-f "+empty+": the directory has no .json, .yaml or .yml file (nothing written)")
	if strings.Count(r.err.Error(), empty) != 1 {
		t.Errorf("error %q names the directory more than once", r.err)
	}
}

func TestApplyOfMultiDocumentYAMLAppliesEveryDocument(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	stream := "---\n" + yamlOf(t, "web", 3) + "---\n" + yamlOf(t, "api", 1) + "--- # a list as a document\n" +
		"items:\n" + indentList(yamlOf(t, "one", 1)) + indentList(yamlOf(t, "two", 1)) + "...\n"

	r := e.run(stream, "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" created\ncontroller \"api\" created\ncontroller \"one\" created\ncontroller \"two\" created\n")
}

// indentList makes a YAML mapping an item of a YAML sequence.
func indentList(doc string) string {
	var b strings.Builder
	for i, line := range strings.SplitAfter(strings.TrimSuffix(doc, "\n"), "\n") {
		if i == 0 {
			b.WriteString("- ")
		} else {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	return b.String() + "\n"
}

// TestApplyIsAllOrNothingOverFilesAndDocuments: one invalid document
// anywhere, in any file, writes nothing, and the error names where it is.
func TestApplyIsAllOrNothingOverFilesAndDocuments(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	good := writeFile(t, "good.json", encode(t, newController("web", 5)))
	bad := writeFile(t, "bad.yaml", yamlOf(t, "api", 1)+"---\n"+strings.Replace(yamlOf(t, "db", 1), "replicas: 1", "replicas: -1", 1))
	undecodable := writeFile(t, "undecodable.yaml", yamlOf(t, "api", 1)+"---\n"+"id: db\nbogus: 1\n")
	twice := writeFile(t, "twice.yaml", yamlOf(t, "api", 1))
	before := e.revision()

	for _, tt := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"-f", good, "-f", bad}, []string{bad + `, document 2: controller "db" is invalid (nothing written)`, "desiredState.replicas"}},
		{[]string{"-f", good, "-f", undecodable}, []string{undecodable + ", document 2:", "bogus", "(nothing written)"}},
		{[]string{"-f", good, "-f", twice, "-f", twice}, []string{`controller "api" is also in ` + twice}},
		{[]string{"-f", good, "-f", "/nonexistent/x.json"}, []string{"-f /nonexistent/x.json: no such file or directory (nothing written)"}},
		{[]string{"-f", "-", "-f", "-"}, []string{"-f - given twice"}},
	} {
		r := e.run("", append([]string{"apply"}, tt.args...)...)
		assertFails(t, r, tt.wants...)
		if r.stdout != "" {
			t.Errorf("%q printed %q, want nothing", tt.args, r.stdout)
		}
	}
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: part of a refused apply was written", before, after)
	}
	if n := e.get("web").Controller.DesiredState.Replicas; n != 3 {
		t.Errorf("web: stored replicas %d, want 3 (good.json must not be written)", n)
	}
}
