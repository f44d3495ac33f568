package tools

import "github.com/gitcodex/git-codex/gitstate"

// Layout is what a state tree of this version may hold, read from the
// kinds: each kind's directory, depth and fan-out, and whether merges keep
// its records (Kept). Sync checks a remote's state against it before
// adopting any of it (gitstate.Layout).
func (t KindTable) Layout() *gitstate.Layout {
	var l gitstate.Layout
	for _, k := range t {
		l.Dirs = append(l.Dirs, gitstate.DirLayout{Dir: k.Dir, Depth: k.Depth, Fanout: k.Fanout, Keep: k.Kept, Retention: k.Retention})
	}
	l.Archivable = func(path string, data []byte) bool {
		k, _, ok := t.KindOf(path)
		return ok && k.Retention != "" && k.Archived != nil && k.Archived(data)
	}
	return &l
}
