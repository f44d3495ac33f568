package gitcli

import "testing"

func TestUnquoteC(t *testing.T) {
	for q, want := range map[string]string{
		`"plain"`:            "plain",
		`"a\tb\nc\\d\"e"`:    "a\tb\nc\\d\"e",
		`"caf\303\251/objs"`: "café/objs",
	} {
		if got, ok := UnquoteC(q); !ok || got != want {
			t.Errorf("UnquoteC(%s) = %q, %v; want %q", q, got, ok, want)
		}
	}
	for _, bad := range []string{`"open`, `"x"y`, `"\q"`, `"\39"`, `plain`} {
		if got, ok := UnquoteC(bad); ok {
			t.Errorf("UnquoteC(%s) = %q, accepted", bad, got)
		}
	}
}
