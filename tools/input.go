package tools

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxArgsBytes bounds a call's raw arguments; larger calls are refused
// before they are parsed.
const MaxArgsBytes = 1 << 20

// Decode parses raw arguments into a new value of the tool's input type.
// It accepts exactly what the published schema accepts: a JSON object with
// every required field, of the right types, and no unknown fields; and
// every string in it must pass checkValues (valid UTF-8, no control
// characters the field does not allow, no credentials).
func (t *Tool) Decode(args json.RawMessage) (any, *Error) {
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
	if e := checkValues(args, multilineFields(t.inType), taggedFields(t.inType, "credential")); e != nil {
		return nil, e
	}
	if err := t.input().resolved.Validate(generic); err != nil {
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

// multilineFields names the input fields tagged `text:"multiline"` (bodies,
// descriptions): they may hold newlines and tabs. Every other string, at
// any depth, is one line of printable text.
func multilineFields(typ reflect.Type) map[string]bool { return taggedFields(typ, "multiline") }

// taggedFields names the input fields tagged `text:"<tag>"`: "multiline",
// or "credential" for a field that carries a credential git codex issued
// (a session or lock token) to the tool that checks it: only there may one
// be sent, and it is never stored (the state keeps hashes).
func taggedFields(typ reflect.Type, tag string) map[string]bool {
	out := map[string]bool{}
	if typ.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Tag.Get("text") == tag {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out[name] = true
		}
	}
	return out
}

// checkValues checks every string (and key) in raw arguments where they
// enter, before anything stores them: the text must be valid UTF-8 (checked
// on the raw bytes: encoding/json would silently turn bad bytes into
// U+FFFD), hold no control character (NUL cuts a commit message short; only
// multiline fields may hold newlines and tabs), and carry no credential
// (SECRET_DETECTED: everything in the state is pushed and readable by anyone
// who can read the repository). The error names the field, never the value.
func checkValues(raw json.RawMessage, multiline, credential map[string]bool) *Error {
	return walkStrings("", raw, func(field string, rawStr []byte, s string, key bool) *Error {
		if !validText(rawStr, s) {
			return Errorf(InvalidInput, "%s is not valid UTF-8 text; send text as UTF-8", describe(field, key)).With("field", field)
		}
		if kind := findSecret(s, !key && credential[field]); kind != "" {
			return Errorf(SecretDetected, "%s holds what looks like a %s; secrets must never enter the state (it is pushed and readable by anyone who can read the repository): remove it, or say where the secret is kept instead (an environment variable's name)", describe(field, key), kind).
				With("field", field).With("kind", kind)
		}
		allowLines := !key && multiline[field]
		if r, ok := badControl(s, allowLines); ok {
			allowed := "no control characters"
			if allowLines {
				allowed = "no control characters except newline and tab"
			}
			return Errorf(InvalidInput, "%s holds the control character %U; it takes %s", describe(field, key), r, allowed).
				With("field", field).With("character", fmtRune(r))
		}
		return nil
	})
}

func describe(field string, key bool) string {
	if key {
		return "a key in " + field
	}
	return "field " + field
}

func fmtRune(r rune) string { return strings.Trim(strconv.QuoteRuneToASCII(r), "'") }

// validText reports whether a JSON string was valid UTF-8 as sent: every
// U+FFFD in the decoded text must have been sent as one (literally or as
// \ufffd), not made by the decoder from bad bytes or a lone surrogate.
func validText(raw []byte, s string) bool {
	if !utf8.Valid(raw) {
		return false
	}
	decoded := strings.Count(s, "\uFFFD")
	if decoded == 0 {
		return true
	}
	sent := bytes.Count(raw, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
	return decoded <= sent
}

// badControl finds the first control character s may not hold; newline and
// tab pass when lines are allowed, and so does a carriage return that ends
// a line (text from Windows).
func badControl(s string, lines bool) (rune, bool) {
	for i, r := range s {
		if !unicode.IsControl(r) {
			continue
		}
		if lines && (r == '\n' || r == '\t' || (r == '\r' && strings.HasPrefix(s[i+1:], "\n"))) {
			continue
		}
		return r, true
	}
	return 0, false
}

// walkStrings calls fn for every string value and object key in raw JSON,
// in a stable order, with its field path ("headers.Auth", "labels[2]"; a
// key: the path of its object, "arguments" at the top), its raw bytes as
// sent (keys: nil) and its decoded text. It stops at the first
// error fn returns.
func walkStrings(path string, raw json.RawMessage, fn func(field string, raw []byte, s string, key bool) *Error) *Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil // the JSON check reports it
		}
		return fn(path, raw, s, false)
	case '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			field := k
			if path != "" {
				field = path + "." + k
			}
			// a key is named by where it is, never by itself (it may be
			// the very secret)
			where := path
			if where == "" {
				where = "arguments"
			}
			if e := fn(where, nil, k, true); e != nil {
				return e
			}
			if e := walkStrings(field, m[k], fn); e != nil {
				return e
			}
		}
	case '[':
		var l []json.RawMessage
		if json.Unmarshal(raw, &l) != nil {
			return nil
		}
		for i, v := range l {
			if e := walkStrings(path+"["+strconv.Itoa(i)+"]", v, fn); e != nil {
				return e
			}
		}
	}
	return nil
}
