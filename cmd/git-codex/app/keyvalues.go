package app

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// keyValues is a repeatable KEY=VALUE flag for an input field that is a
// map of strings (prompt_execute's options). Values may hold '=' and ','.
type keyValues struct{ m map[string]string }

func (kv *keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	if kv.m == nil {
		kv.m = map[string]string{}
	}
	kv.m[k] = v
	return nil
}

func (kv *keyValues) String() string {
	if kv == nil {
		return ""
	}
	var out []string
	for k, v := range kv.m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// stringList is a repeatable flag for an input field that is a list of
// strings (send_feedback's actionable items): each use adds one item, as
// given (commas and all); a value that is a JSON array of strings adds
// its items, as `git codex call` would take them.
type stringList struct{ items []string }

func (l *stringList) Set(s string) error {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
		var items []string
		if err := json.Unmarshal([]byte(t), &items); err == nil {
			l.items = append(l.items, items...)
			return nil
		}
	}
	l.items = append(l.items, s)
	return nil
}

func (l *stringList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.items, ", ")
}
