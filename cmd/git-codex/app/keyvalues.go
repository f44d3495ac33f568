package app

import (
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
