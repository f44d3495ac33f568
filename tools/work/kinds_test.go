package work

import (
	"maps"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/tools"
)

// TestKindsTable checks the table KindOf relies on: one kind per
// directory, no directory inside another's (the first match would hide a
// kind), a layout that ends in a file, and a holder rule that names its
// resource.
func TestKindsTable(t *testing.T) {
	kinds := Builtin().Kinds()
	for i, k := range kinds {
		if k.Name == "" || k.Dir == "" || k.Depth < 1 || !validates(kinds, k) {
			t.Errorf("kind %d (%q) is incomplete: %+v", i, k.Name, k)
		}
		if k.Claim != nil && k.Claim.Resource == "" {
			t.Errorf("kind %s has a holder rule without a resource field", k.Name)
		}
		for j, o := range kinds {
			if i != j && (k.Dir == o.Dir || strings.HasPrefix(k.Dir+"/", o.Dir+"/")) {
				t.Errorf("kind %s's directory %q is inside kind %s's %q", k.Name, k.Dir, o.Name, o.Dir)
			}
		}
	}
	for _, tc := range []struct {
		path string
		kind string
	}{
		{"mail/boss/a/b/m-0000000000000001.json", "mail"},
		{"reviews/active/coder.json", "review"},
		{"config/config.json", "config"},
		{"tasks/x", "task"},
	} {
		k, _, ok := kinds.KindOf(tc.path)
		if !ok || k.Name != tc.kind {
			t.Errorf("KindOf(%s) = %q, %v; want %q", tc.path, k.Name, ok, tc.kind)
		}
	}
	if _, _, ok := kinds.KindOf("reviews/other/x.json"); ok {
		t.Errorf("KindOf(reviews/other/x.json) found a kind; that directory is no kind's")
	}
}

// validates reports whether ValidateRecord checks k's records (a kind
// defined without a check would panic there): a record of another shape
// at k's layout is refused.
func validates(kinds tools.KindTable, k tools.Kind) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return kinds.ValidateRecord(k.Dir+"/"+strings.Repeat("x/", k.Depth-1)+"x.json", []byte(`"not a record"`)) != nil
}

// TestRetentionKinds checks that archive takes, by name, exactly the kinds
// that say retention archives them (Kind.Retention, which gitstate checks
// a record archive against): reads aside, which are refs, not records.
func TestRetentionKinds(t *testing.T) {
	fromKinds := map[string]bool{}
	for _, k := range Builtin().Kinds() {
		if k.Retention != "" {
			fromKinds[k.Retention] = true
		}
	}
	taken := map[string]bool{}
	for _, k := range retentionKinds() {
		if k != retainReads {
			taken[k] = true
		}
	}
	if !maps.Equal(fromKinds, taken) {
		t.Errorf("the kinds name retention %v, archive takes %v", fromKinds, taken)
	}
}
