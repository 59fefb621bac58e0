package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// Duration is a time.Duration written in JSON as a Go duration string,
// such as "2s", "1m30s" or "500ms". Numbers are refused: a bare 2 could mean
// seconds or nanoseconds.
type Duration time.Duration

// String returns the duration as time.Duration writes it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON reads a duration string; null leaves d as it is.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		e := &valueError{value: data, err: fmt.Errorf("duration must be a string such as %q, got %s", "2s", data)}
		if errors.As(err, &e.typ) {
			e.typ.Type = reflect.TypeFor[Duration]()
		}
		return e
	}
	parsed, err := parseDuration(s)
	if err != nil {
		return &valueError{value: data, err: err}
	}
	*d = Duration(parsed)
	return nil
}

// parseDuration parses a duration string with an error that says what a
// valid one looks like.
func parseDuration(s string) (time.Duration, error) {
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`invalid duration %q: want a number and a unit, such as "500ms", "2s" or "1m30s"`, shorten(s))
	}
	return parsed, nil
}
