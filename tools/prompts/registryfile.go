package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// registryFile is .agent/<agent>/registry.json as Climpt and seed 004
// define it. Unknown fields are ignored, so registries written by newer
// Climpt versions load unchanged.
type registryFile struct {
	Version     string `json:"version"`
	Description string `json:"description"`
	Tools       struct {
		AvailableConfigs []string       `json:"availableConfigs"`
		Commands         []registryItem `json:"commands"`
	} `json:"tools"`
}

// registryItem is one entry of tools.commands.
type registryItem struct {
	C1          string `json:"c1"`
	C2          string `json:"c2"`
	C3          string `json:"c3"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Usage       string `json:"usage"`
	Options     *struct {
		Edition     stringList `json:"edition"`
		Input       stringList `json:"input"` // the older name of edition
		Adaptation  stringList `json:"adaptation"`
		File        flexBool   `json:"file"`
		Stdin       flexBool   `json:"stdin"`
		Destination flexBool   `json:"destination"`
	} `json:"options"`
	UV uvList `json:"uv"`
}

func (it registryItem) options() (Options, bool) {
	if it.Options == nil {
		return Options{}, false
	}
	o := Options{
		Edition:     it.Options.Edition,
		Adaptation:  it.Options.Adaptation,
		File:        bool(it.Options.File),
		Stdin:       bool(it.Options.Stdin),
		Destination: bool(it.Options.Destination),
	}
	if len(o.Edition) == 0 {
		o.Edition = it.Options.Input
	}
	return o, true
}

// parseRegistry decodes registry.json. Errors carry the line and column
// they were found at (0 when unknown).
func parseRegistry(data []byte) (registryFile, int, error) {
	var rf registryFile
	err := json.Unmarshal(data, &rf)
	if err == nil {
		return rf, 0, nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return rf, line, fmt.Errorf("JSON syntax error at line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := position(data, typ.Offset)
		field := typ.Field
		if field == "" {
			field = "the document"
		}
		return rf, line, fmt.Errorf("line %d, column %d: %s should be %s, not %s", line, col, field, typ.Type, typ.Value)
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return rf, 0, fmt.Errorf("%s", fe.msg)
	}
	return rf, 0, err
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// fieldError is a lenient field that still could not be read.
type fieldError struct{ msg string }

func (e *fieldError) Error() string { return e.msg }

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		if one == "" {
			*l = nil
		} else {
			*l = stringList{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &fieldError{"expected a name or a list of names, got " + string(b)}
	}
	*l = many
	return nil
}

func (b *flexBool) UnmarshalJSON(data []byte) error {
	s := strings.TrimSpace(string(data))
	if strings.HasPrefix(s, "[") {
		var many []flexBool
		if err := json.Unmarshal(data, &many); err != nil {
			return err
		}
		*b = false
		for _, v := range many {
			*b = *b || v
		}
		return nil
	}
	v, _ := strconv.ParseBool(strings.Trim(s, `"`))
	*b = flexBool(v)
	return nil
}

func (u *uvList) UnmarshalJSON(b []byte) error {
	*u = nil
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null" || s == `""`:
		return nil
	case strings.HasPrefix(s, "{"):
		return u.addJSONObject(b)
	case strings.HasPrefix(s, "["):
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		for _, it := range items {
			t := strings.TrimSpace(string(it))
			if strings.HasPrefix(t, "{") {
				if err := u.addJSONObject(it); err != nil {
					return err
				}
				continue
			}
			var name string
			if err := json.Unmarshal(it, &name); err != nil {
				return &fieldError{"uv: expected name: description pairs, got " + t}
			}
			if name != "" {
				*u = append(*u, UserVar{Name: name})
			}
		}
		return nil
	}
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return &fieldError{"uv: expected a list of name: description, got " + s}
	}
	*u = uvList{{Name: name}}
	return nil
}

// addJSONObject adds an object's pairs in the order they are written.
func (u *uvList) addJSONObject(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		desc, _ := v.(string)
		*u = append(*u, UserVar{Name: fmt.Sprint(k), Description: desc})
	}
	return nil
}
