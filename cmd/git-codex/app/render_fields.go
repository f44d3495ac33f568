package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// renderFields prints a result that has no renderer of its own for a
// person, as `task show` prints a task: one "name: value" line per field
// that is set, lists of records as tables, and long text last, after a
// blank line. Scripts use --json.
func (e *env) renderFields(data any) error {
	v := reflect.ValueOf(data)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return writeJSON(e.stdout, data)
	}
	type line struct{ name, value string }
	var lines []line
	var texts []line
	type list struct {
		name string
		v    reflect.Value
	}
	var lists []list
	for _, f := range jsonFields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if isEmptyValue(fv) {
			continue
		}
		switch {
		case isRecordList(fv):
			lists = append(lists, list{f.name, fv})
		case fv.Kind() == reflect.String && strings.Contains(fv.String(), "\n"):
			texts = append(texts, line{f.name, fv.String()})
		default:
			lines = append(lines, line{f.name, scalarText(e, fv)})
		}
	}
	w := e.stdout
	width := 0
	for _, l := range lines {
		width = max(width, len(l.name)+1)
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%-*s %s\n", width, l.name+":", l.value)
	}
	for _, l := range lists {
		fmt.Fprintf(w, "\n%s:\n", l.name)
		if err := e.recordTable(l.v); err != nil {
			return err
		}
	}
	for _, t := range texts {
		fmt.Fprintf(w, "\n%s:\n%s\n", t.name, strings.TrimRight(t.value, "\n"))
	}
	return nil
}

// recordTable prints a list of structs as a table of their fields that
// hold a short value in at least one row.
func (e *env) recordTable(list reflect.Value) error {
	elem := list.Type().Elem()
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	var cols []jsonField
	for _, f := range jsonFields(elem) {
		if isRecordList(reflect.Zero(f.typ)) || f.typ.Kind() == reflect.Map {
			continue
		}
		for i := 0; i < list.Len(); i++ {
			if row := reflect.Indirect(list.Index(i)); row.IsValid() && !isEmptyValue(row.FieldByIndex(f.index)) {
				cols = append(cols, f)
				break
			}
		}
	}
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = strings.ToUpper(strings.ReplaceAll(c.name, "_", " "))
	}
	tp := e.table(headers...)
	for i := 0; i < list.Len(); i++ {
		row := reflect.Indirect(list.Index(i))
		if !row.IsValid() {
			continue
		}
		for _, c := range cols {
			fv := row.FieldByIndex(c.index)
			if isEmptyValue(fv) {
				tp.AddField("-")
				continue
			}
			tp.AddField(oneLine(scalarText(e, fv)))
		}
		tp.EndRow()
	}
	return tp.Render()
}

type jsonField struct {
	name  string
	index []int
	typ   reflect.Type
}

// jsonFields lists a struct type's fields under their JSON names, in
// declaration order (embedded structs' fields in place), as encoding/json
// would write them.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, index: f.Index, typ: f.Type})
	}
	return out
}

var timeType = reflect.TypeFor[time.Time]()

// isRecordList reports a slice of structs (not of times).
func isRecordList(v reflect.Value) bool {
	if v.Kind() != reflect.Slice {
		return false
	}
	t := v.Type().Elem()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != timeType
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid:
		return true
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || isEmptyValue(v.Elem())
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return v.Len() == 0
	case reflect.Struct:
		if v.Type() == timeType {
			return v.Interface().(time.Time).IsZero()
		}
		return v.IsZero()
	}
	return false
}

// scalarText is a field's value on one line: times as `when` shows them,
// lists joined with commas, maps as key=value, anything else as compact
// JSON.
func scalarText(e *env, v reflect.Value) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	switch {
	case v.Type() == timeType:
		return e.when(v.Interface().(time.Time))
	case v.Kind() == reflect.String:
		return v.String()
	case v.Kind() == reflect.Bool:
		return yesNo(v.Bool())
	case v.Kind() >= reflect.Int && v.Kind() <= reflect.Float64:
		return fmt.Sprint(v.Interface())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = v.Index(i).String()
		}
		return strings.Join(parts, ", ")
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.String:
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())).String()
		}
		return strings.Join(keys, ", ")
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	return string(b)
}
