package main

// apply ignores the status that 'rcctl get -o json|yaml' prints under
// currentState beside each spec, so that get's output applies back. Only
// that top-level field of a controller is dropped, and only when present:
// every other field goes to api.Decode as written, duplicates included, so
// that the decoder is as strict as for a spec without it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// decodeController decodes one controller with api.Decode, without its
// currentState.
func decodeController(data []byte) (*api.ReplicationController, error) {
	if js, err := api.ToJSON(data); err == nil {
		if stripped, ok := withoutCurrentState(js); ok {
			data = stripped
		}
	}
	return api.Decode(data)
}

// withoutCurrentState returns the JSON object js without its top-level
// currentState fields, and whether it had one. Anything that is not a
// well-formed object is left to api.Decode to report on (ok false).
func withoutCurrentState(js []byte) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	type field struct {
		key   string
		value json.RawMessage
	}
	var fields []field
	found := false
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		if key == ctlview.CurrentStateField {
			found = true
			continue
		}
		fields = append(fields, field{key, value})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // data after the object
	}
	if !found {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(f.key)
		if err != nil {
			return nil, false
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes(), true
}
