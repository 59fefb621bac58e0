package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Command is a container command. In JSON it is either a string split on
// spaces (the 2014 form) or an array of strings, which keeps arguments that
// contain spaces intact.
type Command []string

// UnmarshalJSON accepts a string or an array of strings.
func (c *Command) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*c = strings.Fields(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		e := &valueError{value: data, err: errors.New("command must be a string or an array of strings")}
		if errors.As(err, &e.typ) && e.typ.Type.Kind() == reflect.Slice {
			e.typ.Type = reflect.TypeFor[Command]() // not an array of strings: neither form
		}
		return e
	}
	*c = list
	return nil
}
