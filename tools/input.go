package tools

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// MaxArgsBytes bounds a call's raw arguments; larger calls are refused
// before they are parsed.
const MaxArgsBytes = 1 << 20

// decode parses raw arguments into a new value of the tool's input type.
// It accepts exactly what the published schema accepts: a JSON object with
// every required field, of the right types, and no unknown fields.
func (t *Tool) decode(args json.RawMessage) (any, *Error) {
	if len(args) > MaxArgsBytes {
		return nil, Errorf(InvalidInput, "arguments are %d bytes; the limit is %d", len(args), MaxArgsBytes).
			With("size", len(args)).With("limit", MaxArgsBytes)
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var generic any
	if err := json.Unmarshal(args, &generic); err != nil {
		return nil, Errorf(InvalidInput, "arguments are not valid JSON: %v", err).With("reason", err.Error())
	}
	if _, ok := generic.(map[string]any); !ok {
		return nil, Errorf(InvalidInput, "arguments must be a JSON object, e.g. {\"key\":\"value\"}")
	}
	if err := t.schemas().resolved.Validate(generic); err != nil {
		return nil, Errorf(InvalidInput, "invalid arguments for %s: %v; see `git codex tools %s`", t.Name, err, t.Name).With("reason", err.Error())
	}
	in := reflect.New(t.inType)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in.Interface()); err != nil {
		return nil, Errorf(InvalidInput, "invalid arguments for %s: %v", t.Name, err).With("reason", err.Error())
	}
	return in.Interface(), nil
}
