package main

// What apply reads: every -f (a file, a directory, or - for stdin), each
// file one JSON document or a stream of YAML documents separated by ---
// lines, each document one controller or {"items": [...]}. A directory
// gives its .json, .yaml and .yml files in name order, not those of its
// subdirectories. Everything is decoded before apply validates or writes
// anything.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/replication-manager/replication-manager/api"
)

// applyExtensions are the file name endings apply reads from a directory.
var applyExtensions = []string{".json", ".yaml", ".yml"}

// applyDoc is one controller to apply and where it came from: "web.yaml",
// "web.yaml, document 2", "stdin, items[1]".
type applyDoc struct {
	source string
	rc     *api.ReplicationController
}

// readApplyDocs reads and decodes every controller of the -f values, in
// order. A controller given twice is refused: which of the two to write
// would be a guess.
func (c *cli) readApplyDocs(filenames []string) ([]applyDoc, error) {
	files, err := expandApplyFiles(filenames)
	if err != nil {
		return nil, err
	}
	var docs []applyDoc
	seen := map[string]string{}
	for _, name := range files {
		data, err := c.readInput(name)
		if err != nil {
			return nil, err
		}
		source := name
		if name == "-" {
			source = "stdin"
		}
		fileDocs, err := decodeFile(source, data)
		if err != nil {
			return nil, err
		}
		for _, d := range fileDocs {
			if first, dup := seen[d.rc.ID]; dup {
				return nil, fmt.Errorf("%s: controller %q is also in %s; give each controller once (nothing written)", d.source, d.rc.ID, first)
			}
			seen[d.rc.ID] = d.source
		}
		docs = append(docs, fileDocs...)
	}
	return docs, nil
}

// expandApplyFiles replaces each directory among the -f values by its
// .json, .yaml and .yml files in name order. "-" may be given once.
func expandApplyFiles(filenames []string) ([]string, error) {
	var out []string
	stdin := false
	for _, name := range filenames {
		if name == "-" {
			if stdin {
				return nil, usageErrorf("apply: -f - given twice (stdin can be read once)")
			}
			stdin = true
			out = append(out, name)
			continue
		}
		info, err := os.Stat(name)
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w (nothing written)", name, unwrapPathError(err))
		}
		if !info.IsDir() {
			out = append(out, name)
			continue
		}
		entries, err := os.ReadDir(name) // in name order
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w (nothing written)", name, unwrapPathError(err))
		}
		n := len(out)
		for _, e := range entries {
			path := filepath.Join(name, e.Name())
			if !slices.Contains(applyExtensions, strings.ToLower(filepath.Ext(e.Name()))) {
				continue
			}
			if st, err := os.Stat(path); err != nil || st.IsDir() {
				continue // a directory named x.json, or a dangling link
			}
			out = append(out, path)
		}
		if len(out) == n {
			return nil, fmt.Errorf("-f %s: the directory has no .json, .yaml or .yml file (nothing written)", name)
		}
	}
	return out, nil
}

// unwrapPathError drops the path from an os error, which the message
// names already.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decodeFile decodes the documents of one file. A file whose first
// non-space character is '{' is one JSON document; any other is YAML, which
// may hold several documents between --- lines (empty ones are skipped).
func decodeFile(source string, data []byte) ([]applyDoc, error) {
	parts, err := splitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (nothing written)", source, err)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: empty input, no document in it (nothing written)", source)
	}
	var docs []applyDoc
	for i, part := range parts {
		where := source
		if len(parts) > 1 {
			where = fmt.Sprintf("%s, document %d", source, i+1)
		}
		rcs, err := decodeApply(part)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (nothing written)", where, err)
		}
		for j, rc := range rcs {
			d := applyDoc{source: where, rc: rc}
			if len(rcs) > 1 {
				d.source = fmt.Sprintf("%s, items[%d]", where, j)
			}
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// splitDocuments splits a YAML stream into its documents, as kubectl
// does (apimachinery's YAML reader); a JSON document is returned whole.
func splitDocuments(data []byte) ([][]byte, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '{' {
		return [][]byte{data}, nil
	}
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if !emptyYAML(doc) {
			docs = append(docs, doc)
		}
	}
}

// emptyYAML reports whether a YAML document holds nothing but blank lines,
// comments and document markers.
func emptyYAML(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && line != "---" && line != "..." {
			return false
		}
	}
	return true
}
