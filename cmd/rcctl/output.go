package main

// The -o flag of the listing commands (get, nodes, rollout history), one
// parser and one printer for all of them: the table (default), wide, json,
// yaml, name, and jsonpath=TEMPLATE, evaluated by client-go's jsonpath as
// kubectl's -o jsonpath is (missing keys print nothing, as kubectl's
// default), and ended with a newline, which kubectl leaves out.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/util/jsonpath"

	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// The output formats, as -o takes them; jsonpath comes with "=TEMPLATE".
const (
	outputTable    = ""
	outputWide     = "wide"
	outputJSON     = "json"
	outputYAML     = "yaml"
	outputName     = "name"
	outputJSONPath = "jsonpath"
)

// output is a parsed -o.
type output struct {
	format string
	// jp is the parsed template of -o jsonpath=TEMPLATE.
	jp *jsonpath.JSONPath
}

// parseOutput reads the -o value of command, which takes the formats
// listed (besides the table, always allowed).
func parseOutput(command, value string, formats []string) (output, error) {
	format, template, hasTemplate := strings.Cut(value, "=")
	if !slices.Contains(formats, format) && format != outputTable {
		return output{}, usageErrorf("%s: unknown output format %q (want %s)", command, value, formatList(formats))
	}
	if format != outputJSONPath {
		if hasTemplate {
			return output{}, usageErrorf("%s: -o %s takes no =TEMPLATE", command, format)
		}
		return output{format: format}, nil
	}
	if strings.TrimSpace(template) == "" {
		return output{}, usageErrorf("%s: -o jsonpath needs a template, as in -o jsonpath='{.items[*].id}'", command)
	}
	jp := jsonpath.New("output").AllowMissingKeys(true)
	if err := jp.Parse(template); err != nil {
		return output{}, usageErrorf("%s: -o jsonpath: template %q: %v", command, template, err)
	}
	return output{format: format, jp: jp}, nil
}

// formatList is "wide, json, yaml, name or jsonpath=TEMPLATE".
func formatList(formats []string) string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f
		if f == outputJSONPath {
			names[i] = "jsonpath=TEMPLATE"
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// document reports whether the format prints a document (json, yaml,
// jsonpath) rather than lines.
func (o output) document() bool {
	return o.format == outputJSON || o.format == outputYAML || o.format == outputJSONPath
}

// writeDocument prints doc, a JSON document, in the format: as it is, as
// YAML, or through the jsonpath template, ended with a newline unless the
// template ends its output with one (kubectl leaves it out, and a shell
// prompt then follows the value on its line).
func (o output) writeDocument(w io.Writer, doc []byte) error {
	switch o.format {
	case outputYAML:
		data, err := ctlview.JSONToYAML(doc)
		if err != nil {
			return err
		}
		doc = data
	case outputJSONPath:
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			return fmt.Errorf("-o jsonpath: %w", err)
		}
		var b bytes.Buffer
		if err := o.jp.Execute(&b, v); err != nil {
			return fmt.Errorf("-o jsonpath: %w", err)
		}
		if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
			b.WriteByte('\n')
		}
		doc = b.Bytes()
	}
	_, err := w.Write(doc)
	return err
}

// addOutputFlag declares -o on cmd with the formats given, and their
// completion.
func addOutputFlag(cmd *cobra.Command, value *string, formats []string) {
	cmd.Flags().StringVarP(value, "output", "o", "", "output format: "+formatList(formats)+" (default: a table)")
	completions := slices.Clone(formats)
	for i, f := range completions {
		if f == outputJSONPath {
			completions[i] = "jsonpath="
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(completions, cobra.ShellCompDirectiveNoFileComp))
}
