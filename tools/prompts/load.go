package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Problem is something in the registry that could not be read: the file
// (slash-separated, relative to the working tree), the line when known, and
// the cause. Commands it touches are left out; everything else is served.
type Problem struct {
	Path  string `json:"path"`
	Line  int    `json:"line,omitempty"`
	Cause string `json:"cause"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Cause)
	}
	return p.Path + ": " + p.Cause
}

// Catalog is one agent's registry as loaded at one moment: its commands,
// sorted by C3L name, the search index over them, and the problems met.
// It is never changed after Load, so any number of goroutines may read it.
type Catalog struct {
	Agent       string
	Version     string
	Description string
	Problems    []Problem

	root     string // working tree ("" when there is none)
	commands []*Command
	byKey    map[string]*Command
	// broken holds, by C3L name, the templates that are not listed
	// because their front matter could not be read.
	broken map[string]Problem
	index  *index
	// configs are the Climpt configurations read, by domain (climptconfig.go).
	configs map[string]climptConfig
	stamp   fileStamp // registry.json when it was read
	print   uint64    // fingerprint of the agent's folder when it was read
}

// Commands returns the commands, sorted by C3L name.
func (cat *Catalog) Commands() []*Command { return cat.commands }

// Lookup finds a command by its C3L name.
func (cat *Catalog) Lookup(c1, c2, c3 string) (*Command, bool) {
	c, ok := cat.byKey[Key(c1, c2, c3)]
	return c, ok
}

// Broken reports the problem that kept a template-only command out.
func (cat *Catalog) Broken(c1, c2, c3 string) (Problem, bool) {
	p, ok := cat.broken[Key(c1, c2, c3)]
	return p, ok
}

// Agents lists the agents whose folders under root's .agent hold a
// registry.json or a prompts folder, sorted, always with the default agent.
func Agents(root string) []string {
	out := []string{DefaultAgent}
	if root == "" {
		return out
	}
	des, _ := os.ReadDir(filepath.Join(root, ".agent"))
	for _, de := range des {
		n := de.Name()
		if n == DefaultAgent || ValidName("agent", n) != nil {
			continue
		}
		for _, f := range []string{"registry.json", "prompts"} {
			if _, err := os.Stat(filepath.Join(root, ".agent", n, f)); err == nil {
				out = append(out, n)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// RegistryPath is registry.json's path relative to the working tree.
func RegistryPath(agent string) string { return ".agent/" + agent + "/registry.json" }

// PromptsPath is the prompts folder's path relative to the working tree.
func PromptsPath(agent string) string { return ".agent/" + agent + "/prompts" }

// Load reads agent's registry from the working tree at root ("" for none:
// only the built-ins are served). It always returns a catalog: a missing or
// malformed registry.json, or a template whose front matter cannot be read,
// is a Problem, and the rest (at least the built-ins) is still served.
// agent must have passed ValidName.
func Load(root, agent string) *Catalog {
	cat := &Catalog{Agent: agent, root: root, byKey: map[string]*Command{}, broken: map[string]Problem{}}
	cat.print = fingerprint(root, agent)
	var items []registryItem
	if root == "" {
		if agent != DefaultAgent {
			cat.problem(RegistryPath(agent), 0, "no working tree to read it from (a bare repository)")
		}
	} else {
		items = cat.readRegistry()
	}
	files := map[string]*templateDir{}
	if root != "" {
		files = cat.scanTemplates()
	}
	if agent == DefaultAgent {
		for key, td := range builtinDirs() {
			if _, overridden := files[key]; !overridden {
				files[key] = td
			}
		}
	}
	for _, it := range items {
		key := Key(it.C1, it.C2, it.C3)
		if _, dup := cat.byKey[key]; dup {
			continue // Climpt keeps the first entry too
		}
		cmd := &Command{C1: it.C1, C2: it.C2, C3: it.C3, Title: it.Title, Description: it.Description, Usage: it.Usage, UV: it.UV, Source: SourceRegistry}
		opts, hasOpts := it.options()
		cmd.Options = opts
		if root != "" {
			cfg, td := cat.configured(it)
			cmd.cfg = cfg
			if td != nil { // its configuration names another folder: that one is Climpt's
				if old, ok := files[key]; ok && !old.builtin {
					cat.problem(path.Join(PromptsPath(agent), it.C1, it.C2, it.C3), 0, "not used: config %s names %s for %s", cfg.name, td.base, it.C1)
				}
				files[key] = td
				if td.err != nil {
					cat.broken[key] = cat.problem(path.Join(td.base, it.C2, it.C3, primary(td.names)), lineOf(td.err), "%v", td.err)
				}
			}
		}
		if td, ok := files[key]; ok {
			td.describe(cmd, !hasOpts)
			delete(files, key)
			delete(cat.broken, key) // listed by registry.json: its entry describes it
		}
		cat.add(cmd)
	}
	for _, td := range files {
		if td.err != nil {
			continue
		}
		cmd := &Command{C1: td.c1, C2: td.c2, C3: td.c3}
		cmd.cfg = cat.config(td.c1)
		td.describe(cmd, true)
		cat.add(cmd)
	}
	sort.Slice(cat.commands, func(i, j int) bool { return cat.commands[i].Key() < cat.commands[j].Key() })
	sort.Slice(cat.Problems, func(i, j int) bool { return cat.Problems[i].String() < cat.Problems[j].String() })
	cat.index = buildIndex(cat.commands)
	return cat
}

func (cat *Catalog) add(cmd *Command) {
	if cmd.Options.Edition == nil {
		cmd.Options.Edition = []string{}
	}
	cat.commands = append(cat.commands, cmd)
	cat.byKey[cmd.Key()] = cmd
}

func (cat *Catalog) problem(path string, line int, format string, args ...any) Problem {
	p := Problem{Path: path, Line: line, Cause: fmt.Sprintf(format, args...)}
	cat.Problems = append(cat.Problems, p)
	return p
}

// readRegistry reads registry.json. A missing file is a problem unless
// the agent has no folder at all and is the default (a repository that
// keeps no registry still gets the built-ins, quietly).
func (cat *Catalog) readRegistry() []registryItem {
	rel := RegistryPath(cat.Agent)
	full := filepath.Join(cat.root, filepath.FromSlash(rel))
	cat.stamp = stampOf(full)
	data, err := ReadFile(full, MaxRegistryBytes)
	if errors.Is(err, fs.ErrNotExist) {
		if _, derr := os.Stat(filepath.Dir(full)); cat.Agent == DefaultAgent && errors.Is(derr, fs.ErrNotExist) {
			return nil
		}
		cat.problem(rel, 0, "file not found")
		return nil
	}
	if err != nil {
		cat.problem(rel, 0, "%v", err)
		return nil
	}
	rf, line, err := parseRegistry(data)
	if err != nil {
		cat.problem(rel, line, "%v", err)
		return nil
	}
	cat.Version, cat.Description = rf.Version, rf.Description
	items := rf.Tools.Commands[:0:0]
	for i, it := range rf.Tools.Commands {
		bad := ""
		for _, f := range [][2]string{{"c1", it.C1}, {"c2", it.C2}, {"c3", it.C3}} {
			if err := ValidName(f[0], f[1]); err != nil && bad == "" {
				bad = err.Error()
			}
		}
		if bad != "" {
			cat.problem(rel, 0, "tools.commands[%d] left out: %s", i, bad)
			continue
		}
		items = append(items, it)
	}
	return items
}

// templateDir is one command's folder of templates.
type templateDir struct {
	c1, c2, c3 string
	dir        string   // absolute; "" for built-ins
	names      []string // f_*.md, sorted
	builtin    bool
	fm         frontMatter
	err        error
	// base is the folder the templates must stay in, when a Climpt
	// configuration names it (slash-separated, relative); "" for the
	// agent's prompts folder.
	base string
}

// describe fills what registry.json left empty from the front matter.
func (td *templateDir) describe(cmd *Command, useOptions bool) {
	cmd.Templates, cmd.dir, cmd.builtin, cmd.base = td.names, td.dir, td.builtin, td.base
	if td.builtin {
		cmd.Source = SourceBuiltin
	} else {
		cmd.Source = SourceTemplate
	}
	if td.err != nil {
		return
	}
	fm := td.fm
	if cmd.Title == "" {
		cmd.Title = fm.Title
	}
	if cmd.Description == "" {
		cmd.Description = fm.Description
		if cmd.Description == "" {
			cmd.Description = fm.Title
		}
	}
	if cmd.Usage == "" {
		cmd.Usage = fm.Usage
	}
	if useOptions {
		cmd.Options = fm.options()
	}
	if len(cmd.UV) == 0 {
		cmd.UV = fm.UV
	}
}

// primary is the template whose front matter describes the command:
// f_default.md, else the first.
func primary(names []string) string {
	for _, n := range names {
		if n == "f_default.md" {
			return n
		}
	}
	return names[0]
}

// scanTemplates finds every <c1>/<c2>/<c3>/f_*.md under the prompts
// folder. Entries that resolve outside the folder (symlinks) are refused
// as problems; names that could not be C3L words are skipped.
func (cat *Catalog) scanTemplates() map[string]*templateDir {
	out := map[string]*templateDir{}
	rel := PromptsPath(cat.Agent)
	base := filepath.Join(cat.root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(base)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			cat.problem(rel, 0, "%v", err)
		}
		return out
	}
	for _, c1 := range cat.subdirs(real, rel) {
		for _, c2 := range cat.subdirs(real, path.Join(rel, c1)) {
			for _, c3 := range cat.subdirs(real, path.Join(rel, c1, c2)) {
				dirRel := path.Join(rel, c1, c2, c3)
				names := cat.templateFiles(real, dirRel)
				if len(names) == 0 {
					continue
				}
				td := &templateDir{c1: c1, c2: c2, c3: c3, dir: filepath.Join(cat.root, filepath.FromSlash(dirRel)), names: names}
				name := primary(names)
				data, err := ReadFile(filepath.Join(td.dir, name), MaxTemplateBytes)
				if err == nil {
					td.fm, err = readFrontMatter(data)
				}
				if err != nil {
					td.err = err
					cat.broken[Key(c1, c2, c3)] = cat.problem(path.Join(dirRel, name), lineOf(err), "%v", err)
				}
				out[Key(c1, c2, c3)] = td
			}
		}
	}
	return out
}

// readFrontMatter reads a template's front matter; a template without one
// has an empty front matter (registry.json may describe it).
func readFrontMatter(data []byte) (frontMatter, error) {
	head, _, err := splitFrontMatter(data)
	if errors.Is(err, errNoFrontMatter) {
		return frontMatter{}, nil
	}
	if err != nil {
		return frontMatter{}, err
	}
	return parseFrontMatter(head)
}

// subdirs lists the directories in dirRel whose names are valid C3L words
// and that stay inside the prompts folder real.
func (cat *Catalog) subdirs(real, dirRel string) []string {
	var out []string
	for _, e := range cat.entries(real, dirRel) {
		if e.IsDir() && ValidName("name", e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// templateFiles lists the f_*.md files in dirRel that stay inside real.
func (cat *Catalog) templateFiles(real, dirRel string) []string {
	var out []string
	for _, e := range cat.entries(real, dirRel) {
		n := e.Name()
		if !e.IsDir() && strings.HasPrefix(n, "f_") && strings.HasSuffix(n, ".md") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// entries reads a directory of the prompts folder, following symlinks
// only when they resolve inside it (a symlink leading out is a problem and
// left out); the result's IsDir is the target's.
func (cat *Catalog) entries(real, dirRel string) []fs.FileInfo {
	dir := filepath.Join(cat.root, filepath.FromSlash(dirRel))
	des, err := os.ReadDir(dir)
	if err != nil {
		cat.problem(dirRel, 0, "%v", err)
		return nil
	}
	var out []fs.FileInfo
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		full := filepath.Join(dir, de.Name())
		if de.Type()&fs.ModeSymlink != 0 {
			if _, err := insideFolder(real, full); err != nil {
				cat.problem(path.Join(dirRel, de.Name()), 0, "%v", err)
				continue
			}
		}
		fi, err := os.Stat(full)
		if err != nil {
			cat.problem(path.Join(dirRel, de.Name()), 0, "%v", err)
			continue
		}
		out = append(out, fi)
	}
	return out
}

// errEscapes marks a template path that leads out of the prompts folder.
var errEscapes = errors.New("leads outside the prompts folder; templates must live inside it")

// insideFolder resolves full's symlinks and checks that the result lies in
// the folder real (itself resolved). It returns the resolved path.
func insideFolder(real, full string) (string, error) {
	res, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", err
	}
	r, err := filepath.Rel(real, res)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", errEscapes
	}
	return res, nil
}

// lineOf digs the line number out of a front matter error ("line N").
func lineOf(err error) int {
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	n := 0
	for _, r := range msg[i+5:] {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}
