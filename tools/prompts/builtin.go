package prompts

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// builtinFS holds the templates git codex ships for its own prompts (the
// work prompt, the review prompt, the feedback prompt), laid out as a
// Climpt prompts folder. A team overrides one by adding a template folder
// of the same C3L name to .agent/climpt/prompts.
//
//go:embed builtin
var builtinFS embed.FS

// builtinDirs returns the built-in templates by C3L name, their front
// matter read. The embedded files are tested, so a read error is a bug:
// it is kept on the templateDir like a working tree's.
func builtinDirs() map[string]*templateDir {
	out := map[string]*templateDir{}
	fs.WalkDir(builtinFS, "builtin", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "f_") {
			return err
		}
		parts := strings.Split(path.Dir(p), "/")
		if len(parts) != 4 {
			return nil
		}
		key := Key(parts[1], parts[2], parts[3])
		td := out[key]
		if td == nil {
			td = &templateDir{c1: parts[1], c2: parts[2], c3: parts[3], builtin: true}
			out[key] = td
		}
		td.names = append(td.names, d.Name())
		return nil
	})
	for _, td := range out {
		sort.Strings(td.names)
		data, err := builtinFS.ReadFile(td.builtinPath(primary(td.names)))
		if err == nil {
			td.fm, err = readFrontMatter(data)
		}
		td.err = err
	}
	return out
}

func (td *templateDir) builtinPath(name string) string {
	return path.Join("builtin", td.c1, td.c2, td.c3, name)
}
