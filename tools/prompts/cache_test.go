package prompts

import (
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	dir := tree(t, "climpt", nil)
	c := NewCache()
	var loads []int
	stop := c.Watch(func(root string, cat *Catalog) {
		if root != dir || cat.Agent != DefaultAgent {
			t.Errorf("watch: %s %s", root, cat.Agent)
		}
		loads = append(loads, len(cat.Commands()))
	})
	first := c.Get(dir, DefaultAgent)
	if c.Get(dir, DefaultAgent) != first || len(loads) != 1 {
		t.Fatalf("Get loaded again with nothing changed (%d loads)", len(loads))
	}
	if c.Refresh(dir, DefaultAgent) {
		t.Fatal("Refresh reloaded with nothing changed")
	}
	// a template changes: Get (one stat of registry.json) keeps the
	// catalog, Refresh (a walk) reloads it
	write(t, dir, ".agent/climpt/prompts/new/one/here/f_default.md", "---\ndescription: new\n---\nx")
	if c.Get(dir, DefaultAgent) != first {
		t.Fatal("Get reloaded for a template change")
	}
	if !c.Refresh(dir, DefaultAgent) || len(c.Get(dir, DefaultAgent).Commands()) != 12 {
		t.Fatal("Refresh missed a new template")
	}
	// registry.json changes: Get reloads
	time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
	write(t, dir, ".agent/climpt/registry.json", `{"tools":{"commands":[]}}`)
	if n := len(c.Get(dir, DefaultAgent).Commands()); n != 9 { // meta build frontmatter stays: a built-in
		t.Fatalf("after registry.json emptied: %d commands, want 9", n)
	}
	stop()
	c.Reload(dir, DefaultAgent)
	if want := []int{11, 12, 9}; len(loads) != 3 || loads[0] != want[0] || loads[1] != want[1] || loads[2] != want[2] {
		t.Errorf("loads seen %v, want %v", loads, want)
	}
}
