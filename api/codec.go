package api

// This file is the one decoder every program uses for specs, and the encoders
// that write them back. It decides what a well-formed document is (syntax,
// field names, types, one document, a size limit); whether the values make
// sense is Validate's job (validation.go). The strict checks are those of
// sigs.k8s.io/json, the Kubernetes API server's decoder: field names match
// case-sensitively, unknown and duplicate fields are refused with their
// paths, and so is data after the document. What this file adds is said
// where it is: list indices and map keys in the path of a value of the
// wrong type, the path of an error of Command or Duration, and the field
// meant by one written in the wrong case or mistyped.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/agnivade/levenshtein"
	"go.yaml.in/yaml/v2"
	kjson "sigs.k8s.io/json"
)

// MaxSpecBytes is the largest spec Decode accepts. A controller spec is a
// few hundred bytes; the limit keeps a mistaken file or a hostile writer
// from costing the manager memory on every sync. It is well under etcd's
// default request limit of 1.5 MiB.
const MaxSpecBytes = 256 << 10

// ErrSpecTooLarge is wrapped by Decode's error when the input is larger than
// MaxSpecBytes.
var ErrSpecTooLarge = errors.New("spec too large")

// Decode parses a controller spec from JSON or YAML (same field names).
// Input whose first non-space character is '{' is read as JSON, anything
// else as YAML. Decode is strict: unknown or duplicated fields, values of
// the wrong type, trailing data and a second YAML document are errors, each
// naming the field path. It does not validate the values: call Validate.
func Decode(data []byte) (*ReplicationController, error) {
	var rc ReplicationController
	if err := decodeStrict(data, &rc); err != nil {
		return nil, fmt.Errorf("decode controller: %w", err)
	}
	return &rc, nil
}

// DecodeStatus parses a status written by the manager (JSON). It is lenient
// about unknown fields, so that an older program can read the status of a
// newer manager.
func DecodeStatus(data []byte) (*ReplicationControllerStatus, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("decode status: empty input")
	}
	var st ReplicationControllerStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode status: %w", jsonError(data, err))
	}
	return &st, nil
}

// Encode writes a spec as indented JSON with a final newline, the form
// stored in etcd and printed by rcctl. Characters such as '&' in a command
// are written as they are, not HTML-escaped.
func Encode(rc *ReplicationController) ([]byte, error) {
	if rc == nil {
		return nil, errors.New("encode controller: nil controller")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rc); err != nil {
		return nil, fmt.Errorf("encode controller: %w", err)
	}
	return buf.Bytes(), nil
}

// EncodeYAML writes a spec as YAML with the JSON field names, in the order
// of the JSON encoding (id first) rather than sorted.
func EncodeYAML(rc *ReplicationController) ([]byte, error) {
	data, err := Encode(rc)
	if err != nil {
		return nil, err
	}
	// JSON is YAML; decoding into a MapSlice keeps the key order.
	var doc yaml.MapSlice
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("encode controller: %w", err)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode controller: %w", err)
	}
	return out, nil
}

// ToJSON returns one JSON or YAML document as the JSON that Decode reads:
// input larger than MaxSpecBytes is refused, a UTF-8 byte order mark is
// dropped, and YAML (input whose first non-space character is not '{') is
// converted, refusing duplicate keys and a second document. JSON is
// returned as it is, duplicate fields included, so that a decoder of the
// result (Decode, for one item of a list) still refuses them.
func ToJSON(data []byte) ([]byte, error) {
	if len(data) > MaxSpecBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrSpecTooLarge, len(data), MaxSpecBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark, as some editors write
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty input")
	}
	if trimmed[0] != '{' {
		return yamlToJSON(data)
	}
	return data, nil
}

// decodeStrict decodes one JSON or YAML document into v, a pointer to a
// struct. Every unknown or duplicate field is reported (sigs.k8s.io/json
// keeps the first 100), once the document has no other error.
func decodeStrict(data []byte, v any) error {
	data, err := ToJSON(data)
	if err != nil {
		return err
	}
	if bytes.Equal(data, []byte("null")) {
		return errors.New("empty input")
	}
	strict, err := kjson.UnmarshalStrict(data, v)
	if err != nil {
		return jsonError(data, err)
	}
	if len(strict) == 0 {
		return nil
	}
	msgs := make([]string, len(strict))
	for i, err := range strict {
		msgs[i] = err.Error()
		var field kjson.FieldError
		if errors.As(err, &field) && strings.HasPrefix(msgs[i], "unknown field") {
			msgs[i] += fieldHint(reflect.TypeOf(v), field.FieldPath())
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// fieldHint returns ` (did you mean "replicas"?)` for the path of an
// unknown field whose name differs only in case from a field of its
// struct ("Replicas"), or else is near one (closestField: "replicass").
// sigs.k8s.io/json matches names exactly, as a spec must be read (other
// readers of the stored spec would not take "Replicas" for "replicas", as
// encoding/json does), but it only says the field is unknown.
func fieldHint(t reflect.Type, path string) string {
	names := strings.Split(path, ".")
	for i, name := range names {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return ""
		}
		name, _, _ = strings.Cut(name, "[") // containers[0]
		var next reflect.Type
		var tags []string
		for _, f := range reflect.VisibleFields(t) {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			tags = append(tags, tag)
			switch {
			case i < len(names)-1 && tag == name:
				next = f.Type
			case i == len(names)-1 && strings.EqualFold(tag, name):
				return fmt.Sprintf(" (did you mean %q?)", tag)
			}
		}
		if i == len(names)-1 {
			if tag := closestField(name, tags); tag != "" {
				return fmt.Sprintf(" (did you mean %q?)", tag)
			}
			return ""
		}
		if next == nil {
			return ""
		}
		t = next
	}
	return ""
}

// closestField is the field name of tags nearest name by Levenshtein
// distance (ignoring case), the first of equals, when it is near enough
// to be the one meant: at most 2 edits, or a third of its length for a
// longer name ("workdir" for "workingDir"); or "".
func closestField(name string, tags []string) string {
	best, bestDist := "", 0
	for _, tag := range tags {
		d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(tag))
		if d > max(2, len(tag)/3) || best != "" && d >= bestDist {
			continue
		}
		best, bestDist = tag, d
	}
	return best
}

// yamlToJSON converts one YAML document to JSON. Duplicate keys and a second
// non-empty document are errors.
func yamlToJSON(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.SetStrict(true) // duplicate keys
	var doc any
	for n := 0; ; n++ {
		var next any
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlError(err)
		}
		if n == 0 {
			doc = next
		} else if next != nil {
			return nil, errors.New("invalid YAML: more than one document; a spec is one document")
		}
	}
	doc, err := jsonValue(doc)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	out, err := json.Marshal(doc)
	if err != nil { // such as .inf, which JSON has no number for
		return nil, fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return out, nil
}

// jsonValue makes a decoded YAML value one that encoding/json writes: a
// map key that YAML reads as a number or a bool (1, true) is its text, as
// the name of a field or a label.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			if k == nil {
				return nil, errors.New("a map key is null")
			}
			key := fmt.Sprint(k)
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("key %q is in a map twice", key)
			}
			var err error
			if m[key], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
		return m, nil
	case []any:
		for i, e := range v {
			var err error
			if v[i], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, ":\n  ", ": ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	return fmt.Errorf("invalid YAML: %s", msg)
}

// A valueError is an error of an UnmarshalJSON method of this package
// (Command, Duration). Decoders name the path only of the errors they make
// themselves, so it keeps the value it was given, a part of the document
// being decoded (not a copy), for jsonError to find; Decode's error does
// not keep it.
type valueError struct {
	value []byte
	// typ, when the value is of the wrong kind, says which, and where in
	// value (Offset: after a wrong element of a list).
	typ *json.UnmarshalTypeError
	err error // what Error says
}

func (e *valueError) Error() string { return e.err.Error() }

// jsonError rewrites the errors of sigs.k8s.io/json and encoding/json in
// the field-path style of the rest of the package. Offsets are 0-based byte
// offsets into data of the offending byte (the decoders count the bytes
// read, including it).
func jsonError(data []byte, err error) error {
	if ok, offset := kjson.SyntaxErrorOffset(err); ok {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if offset > 0 && offset <= int64(len(data)) && !strings.Contains(msg, "end of JSON input") {
			offset--
		}
		return fmt.Errorf("invalid JSON at offset %d: %s", offset, msg)
	}
	var typ *json.UnmarshalTypeError
	var val *valueError
	switch {
	case errors.As(err, &typ):
		path, ok := pathAt(data, typ.Offset, strings.Split(typ.Field, "."))
		if !ok {
			path = typ.Field
		}
		if path == "" {
			return fmt.Errorf("must be an object, got %s", typ.Value)
		}
		return fmt.Errorf("%s: cannot unmarshal %s into %s", path, typ.Value, typeName(typ.Type))
	case errors.As(err, &val):
		msg, at := val.err.Error(), int64(len(val.value)) // the end of a literal
		if val.typ != nil {
			msg, at = fmt.Sprintf("cannot unmarshal %s into %s", val.typ.Value, typeName(val.typ.Type)), val.typ.Offset
		}
		// val.value is a part of data: the decoder hands each value to its
		// UnmarshalJSON without copying it.
		start := cap(data) - cap(val.value)
		if len(val.value) == 0 || start < 0 || start >= len(data) || &data[start] != &val.value[0] {
			return errors.New(msg)
		}
		if path, ok := pathAt(data, int64(start)+at, nil); ok && path != "" {
			return fmt.Errorf("%s: %s", path, msg)
		}
		return errors.New(msg)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// pathAt returns the path, with list indices and map keys, of the value of
// the JSON document data whose first token ends at offset: where the
// decoders put the Offset of a type error (after a literal, after the '{' or
// '[' of an object or a list). The decoders' own path (Field) has neither
// list indices nor map keys; fields are its struct field names, which tell
// the keys on the path that name fields from map keys, written as
// labels["name"]. With fields nil, every key names a field.
func pathAt(data []byte, offset int64, fields []string) (string, bool) {
	type level struct {
		object  bool
		wantKey bool   // in an object: the next token is a key (or '}')
		key     string // in an object: the key of the value being read
		index   int    // in a list: the index of the value being read
	}
	var stack []level
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		n := len(stack)
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:n-1]
		default:
			if n > 0 && stack[n-1].wantKey {
				stack[n-1].key, stack[n-1].wantKey = tok.(string), false
				continue
			}
			if dec.InputOffset() == offset {
				var b strings.Builder
				for _, l := range stack {
					switch {
					case !l.object:
						fmt.Fprintf(&b, "[%d]", l.index)
					case fields != nil && (len(fields) == 0 || l.key != fields[0]):
						fmt.Fprintf(&b, "[%q]", l.key)
					default:
						if b.Len() > 0 {
							b.WriteByte('.')
						}
						b.WriteString(l.key)
						if fields != nil {
							fields = fields[1:]
						}
					}
				}
				// A type error from inside an UnmarshalJSON (such as
				// intstr's) has an offset in that value, not in data: the
				// path found must then be the decoder's.
				return b.String(), len(fields) == 0
			}
			if d, ok := tok.(json.Delim); ok { // '{' or '['
				stack = append(stack, level{object: d == '{', wantKey: d == '{'})
				continue
			}
		}
		if n := len(stack); n > 0 { // a value has ended
			stack[n-1].wantKey = stack[n-1].object
			if !stack[n-1].object {
				stack[n-1].index++
			}
		}
	}
}

// typeName names a Go type the way a spec author thinks of it.
func typeName(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t {
	case reflect.TypeFor[Command]():
		return "string or array of strings"
	case reflect.TypeFor[Duration]():
		return `duration string such as "2s"`
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.Kind().String()
}
