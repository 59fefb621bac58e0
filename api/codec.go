package api

// This file is the one decoder every program uses for specs, and the encoders
// that write them back. It decides what a well-formed document is (syntax,
// field names, types, one document, a size limit); whether the values make
// sense is Validate's job (validation.go).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
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
	var doc yamlv2.MapSlice
	if err := yamlv2.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("encode controller: %w", err)
	}
	out, err := yamlv2.Marshal(doc)
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
// struct.
func decodeStrict(data []byte, v any) error {
	data, err := ToJSON(data)
	if err != nil {
		return err
	}
	if bytes.Equal(data, []byte("null")) {
		return errors.New("empty input")
	}

	// The walk gives unknown, duplicated and mistyped fields their full path
	// (with list indices). The decoder below is the backstop and does the
	// work; it only reports what the walk cannot see, such as syntax errors.
	if err := checkFields(data, reflect.TypeOf(v).Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("invalid JSON at offset %d: unexpected end of input", len(data))
		}
		return jsonError(data, err)
	}
	end := int(dec.InputOffset())
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		for end < len(data) && isSpace(data[end]) {
			end++
		}
		return fmt.Errorf("invalid JSON at offset %d: unexpected data after the top-level object", end)
	}
	return nil
}

// yamlToJSON converts one YAML document to JSON. Duplicate keys and a second
// non-empty document are errors: sigs.k8s.io/yaml would silently read only
// the first document.
func yamlToJSON(data []byte) ([]byte, error) {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	dec.SetStrict(true) // duplicate keys
	for n := 0; ; n++ {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlError(err)
		}
		if n > 0 && doc != nil {
			return nil, errors.New("invalid YAML: more than one document; a spec is one document")
		}
	}
	out, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, yamlError(err)
	}
	return out, nil
}

func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, ":\n  ", ": ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	return fmt.Errorf("invalid YAML: %s", msg)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// jsonError rewrites encoding/json's errors in the field-path style of the
// rest of the package. Offsets are 0-based byte offsets into data of the
// offending byte (encoding/json counts the bytes read, including it).
func jsonError(data []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		offset := syntax.Offset
		if offset > 0 && offset <= int64(len(data)) && !strings.Contains(syntax.Error(), "end of JSON input") {
			offset--
		}
		return fmt.Errorf("invalid JSON at offset %d: %s", offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Errorf("cannot unmarshal %s into %s", typ.Value, typeName(typ.Type))
		}
		return fmt.Errorf("%s: cannot unmarshal %s into %s", typ.Field, typ.Value, typeName(typ.Type))
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

var (
	commandType     = reflect.TypeFor[Command]()
	durationType    = reflect.TypeFor[Duration]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// typeName names a Go type the way a spec author thinks of it.
func typeName(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	if t == commandType {
		return "string or array of strings"
	}
	if t == durationType {
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

// fieldError is a decoding problem at a field path, found by checkFields.
type fieldError struct {
	path, msg string
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// errSyntax stops checkFields at a syntax error, which the decoder then
// reports with its offset.
var errSyntax = errors.New("syntax")

// checkFields walks one JSON value against the Go type it will be decoded
// into and returns the first unknown, duplicated or mistyped field in
// document order. Field names must match exactly: encoding/json would
// accept "Replicas" for "replicas", but other readers of the stored spec
// would not. It returns nil on a syntax error, which the decoder reports.
func checkFields(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkValue(dec, t, "")
	if errors.Is(err, errSyntax) {
		return nil
	}
	return err
}

func walkValue(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return errSyntax
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if tok == nil { // null leaves any field as it is
		return nil
	}
	mismatch := func(value string) error {
		if path == "" {
			return &fieldError{msg: fmt.Sprintf("must be an object, got %s", value)}
		}
		return &fieldError{path: path, msg: fmt.Sprintf("cannot unmarshal %s into %s", value, typeName(t))}
	}
	if t == commandType {
		return walkCommand(dec, tok, path)
	}
	if t == durationType {
		return walkDuration(tok, path)
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return skipRest(dec, tok)
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch {
		case tok == '{' && t.Kind() == reflect.Struct:
			return walkStruct(dec, t, path)
		case tok == '{' && t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
			return walkMap(dec, t, path)
		case tok == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			for i := 0; dec.More(); i++ {
				if err := walkValue(dec, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ']'
			return syntaxOr(err)
		case tok == '{':
			return mismatch("object")
		default:
			return mismatch("array")
		}
	case string:
		if t.Kind() != reflect.String {
			return mismatch("string")
		}
	case bool:
		if t.Kind() != reflect.Bool {
			return mismatch("bool")
		}
	case json.Number:
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if _, err := strconv.ParseInt(tok.String(), 10, t.Bits()); err != nil {
				return mismatch("number " + tok.String())
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if _, err := strconv.ParseUint(tok.String(), 10, t.Bits()); err != nil {
				return mismatch("number " + tok.String())
			}
		case reflect.Float32, reflect.Float64:
		default:
			return mismatch("number")
		}
	}
	return nil
}

func walkStruct(dec *json.Decoder, t reflect.Type, path string) error {
	fields := jsonFields(t)
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errSyntax
		}
		key, _ := tok.(string)
		ft, ok := fields[key]
		if !ok {
			msg := fmt.Sprintf("unknown field %q", join(path, key))
			for name := range fields {
				if strings.EqualFold(name, key) {
					msg += fmt.Sprintf(" (did you mean %q?)", name)
				}
			}
			return &fieldError{msg: msg}
		}
		if seen[key] {
			return &fieldError{msg: fmt.Sprintf("duplicate field %q", join(path, key))}
		}
		seen[key] = true
		if err := walkValue(dec, ft, join(path, key)); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return syntaxOr(err)
}

func walkMap(dec *json.Decoder, t reflect.Type, path string) error {
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errSyntax
		}
		key, _ := tok.(string)
		if seen[key] {
			return &fieldError{path: path, msg: fmt.Sprintf("duplicate key %q", key)}
		}
		seen[key] = true
		if err := walkValue(dec, t.Elem(), fmt.Sprintf("%s[%q]", path, key)); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return syntaxOr(err)
}

// walkCommand checks a command: a string, or an array of strings.
func walkCommand(dec *json.Decoder, tok json.Token, path string) error {
	switch tok {
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, reflect.TypeFor[string](), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return syntaxOr(err)
	case json.Delim('{'):
		return &fieldError{path: path, msg: "cannot unmarshal object into string or array of strings"}
	}
	if _, ok := tok.(string); !ok {
		return &fieldError{path: path, msg: fmt.Sprintf("cannot unmarshal %s into string or array of strings", tokenKind(tok))}
	}
	return nil
}

// walkDuration checks a duration: a string that time.ParseDuration reads.
// It stops at the first token, because any error ends the walk.
func walkDuration(tok json.Token, path string) error {
	s, ok := tok.(string)
	if !ok {
		kind := tokenKind(tok)
		switch tok {
		case json.Delim('{'):
			kind = "object"
		case json.Delim('['):
			kind = "array"
		}
		return &fieldError{path: path, msg: fmt.Sprintf("cannot unmarshal %s into %s", kind, typeName(durationType))}
	}
	if _, err := parseDuration(s); err != nil {
		return &fieldError{path: path, msg: err.Error()}
	}
	return nil
}

// skipRest consumes the rest of a value whose first token was tok.
func skipRest(dec *json.Decoder, tok json.Token) error {
	if d, ok := tok.(json.Delim); !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return errSyntax
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// jsonFields maps the JSON names of a struct's fields to their types,
// following encoding/json's tags. Embedded structs without a tag are
// flattened, as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range jsonFields(ft) {
					if _, ok := fields[n]; !ok {
						fields[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = ft
	}
	return fields
}

func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case string:
		return "string"
	}
	return "value"
}

func syntaxOr(err error) error {
	if err != nil {
		return errSyntax
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
