package prompts

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The variables a template may use, as Climpt names them, and git codex's
// own context (filled by the caller of Execute, never by options).
const (
	VarInputText       = "input_text"       // Climpt's stdin
	VarInputTextFile   = "input_text_file"  // Climpt's -f/--from: a path, not read
	VarDestinationPath = "destination_path" // Climpt's -o/--destination
	UVPrefix           = "uv-"              // {uv-<name>}, Climpt's --uv-<name>
	OptEdition         = "edition"
	OptAdaptation      = "adaptation"
)

// OptionError is an option the command does not declare, or a value it
// does not accept.
type OptionError struct {
	Option string
	Reason string
}

func (e *OptionError) Error() string { return e.Reason }

// ExecError is a template that exists in the registry but cannot be
// rendered: no file for the edition asked for, an unreadable file, a
// broken front matter, or a path leading out of the prompts folder.
type ExecError struct {
	Path  string // relative to the working tree, or builtin:<c1>/<c2>/<c3>/<file>
	Cause string
}

func (e *ExecError) Error() string { return e.Path + ": " + e.Cause }

// Rendered is an executed command: the template chosen and its text with
// the variables filled and the front matter removed.
type Rendered struct {
	Edition    string `json:"edition"`
	Adaptation string `json:"adaptation,omitempty"`
	Template   string `json:"template" jsonschema:"the template file used: its path in the working tree, or builtin:<c1>/<c2>/<c3>/<file>"`
	Prompt     string `json:"prompt"`
}

// Execute renders cmd with the given options (edition, adaptation,
// input_text, input_text_file, destination_path, uv-<name>) and context
// variables (git codex's, e.g. codex_caller; they override nothing the
// options set, and options cannot set them). The template is chosen as
// Climpt does: f_<edition>_<adaptation>.md, f_<edition>.md,
// f_default_<adaptation>.md, f_default.md. A variable the template uses
// that is known but not given becomes empty; any other {text} is left as
// written.
func (cat *Catalog) Execute(cmd *Command, opts, ctxVars map[string]string) (Rendered, error) {
	tpl, err := cat.Template(cmd, opts)
	if err != nil {
		return Rendered{}, err
	}
	return cat.Render(cmd, tpl, opts, ctxVars)
}

// Template is the template file Execute would render, read: the part of
// Execute that touches the file system, so that it can be done apart (a
// tool reads it before its transaction, outside the state's writer lock).
type Template struct {
	Edition, Adaptation string
	name                string
	data                []byte
}

// Template chooses cmd's template for the options (edition, adaptation)
// and reads it.
func (cat *Catalog) Template(cmd *Command, opts map[string]string) (Template, error) {
	if err := cmd.checkConfig(); err != nil {
		return Template{}, err
	}
	edition, adaptation := opts[OptEdition], opts[OptAdaptation]
	if edition == "" {
		edition = "default"
	}
	if err := cmd.checkChoice(OptEdition, edition, cmd.Options.Edition, 0); err != nil {
		return Template{}, err
	}
	if adaptation != "" {
		if err := cmd.checkChoice(OptAdaptation, adaptation, cmd.Options.Adaptation, 1); err != nil {
			return Template{}, err
		}
	}
	name, ok := cmd.choose(edition, adaptation)
	if !ok {
		want := "f_" + edition + ".md"
		if adaptation != "" {
			want = "f_" + edition + "_" + adaptation + ".md"
		}
		return Template{}, &ExecError{Path: cat.templatePath(cmd, want), Cause: fmt.Sprintf("no template for edition %q%s (nor f_default.md); add one to %s", edition, adaptationNote(adaptation), cat.templateDirPath(cmd))}
	}
	data, err := cat.readTemplate(cmd, name)
	if err != nil {
		return Template{}, err
	}
	return Template{Edition: edition, Adaptation: adaptation, name: name, data: data}, nil
}

// Render fills the template Template read for cmd: options and context
// variables as Execute takes them.
func (cat *Catalog) Render(cmd *Command, tpl Template, opts, ctxVars map[string]string) (Rendered, error) {
	edition, adaptation, name := tpl.Edition, tpl.Adaptation, tpl.name
	head, body, err := splitFrontMatter(tpl.data)
	if err == nil {
		_, err = parseFrontMatter(head)
	}
	if err != nil && !errors.Is(err, errNoFrontMatter) {
		return Rendered{}, &ExecError{Path: cat.templatePath(cmd, name), Cause: err.Error()}
	}
	used := usedVars(string(body))
	vars := map[string]string{VarInputText: "", VarInputTextFile: "", VarDestinationPath: ""}
	for _, v := range cmd.UV {
		vars[UVPrefix+v.Name] = ""
	}
	for v := range used {
		if strings.HasPrefix(v, UVPrefix) {
			vars[v] = ""
		}
	}
	for k, v := range opts {
		if k == OptEdition || k == OptAdaptation {
			continue
		}
		if err := cmd.checkOption(k, used); err != nil {
			return Rendered{}, err
		}
		vars[k] = v
	}
	for k, v := range ctxVars {
		vars[k] = v
	}
	return Rendered{Edition: edition, Adaptation: adaptation, Template: cat.templatePath(cmd, name), Prompt: substitute(string(body), vars)}, nil
}

func adaptationNote(a string) string {
	if a == "" {
		return ""
	}
	return fmt.Sprintf(" and adaptation %q", a)
}

// checkChoice accepts an edition or adaptation the command declares, or
// one a template file exists for (part 0 or 1 of f_<edition>_<adaptation>).
func (c *Command) checkChoice(opt, value string, declared []string, part int) error {
	if slices.Contains(declared, value) || (opt == OptEdition && value == "default") {
		return nil
	}
	for _, n := range c.Templates {
		e, a, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(n, "f_"), ".md"), "_")
		if (part == 0 && e == value) || (part == 1 && a == value) {
			return nil
		}
	}
	return &OptionError{Option: opt, Reason: fmt.Sprintf("%s %q is not one %s offers (%s)", opt, value, c.Key(), strings.Join(declared, ", "))}
}

// checkOption accepts the options the command declares: input_text when
// it takes stdin, input_text_file when it takes a file, destination_path
// when it takes a destination, uv-<name> for a declared uv variable or one
// its template uses.
func (c *Command) checkOption(k string, used map[string]bool) error {
	ok := false
	switch {
	case k == VarInputText:
		ok = c.Options.Stdin
	case k == VarInputTextFile:
		ok = c.Options.File
	case k == VarDestinationPath:
		ok = c.Options.Destination
	case strings.HasPrefix(k, UVPrefix):
		ok = c.hasUV(strings.TrimPrefix(k, UVPrefix)) || used[k]
	}
	if !ok {
		return &OptionError{Option: k, Reason: fmt.Sprintf("option %q is not declared for %s; it accepts: %s", k, c.Key(), strings.Join(c.AcceptedOptions(), ", "))}
	}
	return nil
}

// AcceptedOptions lists the option names the command declares.
func (c *Command) AcceptedOptions() []string {
	out := []string{OptEdition, OptAdaptation}
	if c.Options.Stdin {
		out = append(out, VarInputText)
	}
	if c.Options.File {
		out = append(out, VarInputTextFile)
	}
	if c.Options.Destination {
		out = append(out, VarDestinationPath)
	}
	for _, v := range c.UV {
		out = append(out, UVPrefix+v.Name)
	}
	return out
}

// choose picks the template file in Climpt's order of preference.
func (c *Command) choose(edition, adaptation string) (string, bool) {
	var cands []string
	if adaptation != "" {
		cands = append(cands, "f_"+edition+"_"+adaptation+".md")
	}
	cands = append(cands, "f_"+edition+".md")
	if adaptation != "" {
		cands = append(cands, "f_default_"+adaptation+".md")
	}
	cands = append(cands, "f_default.md")
	for _, name := range cands {
		if slices.Contains(c.Templates, name) {
			return name, true
		}
	}
	return "", false
}

// readTemplate reads a template file, refusing one that now resolves
// outside the prompts folder (the folder may have changed since the load).
func (cat *Catalog) readTemplate(cmd *Command, name string) ([]byte, error) {
	if cmd.builtin {
		td := &templateDir{c1: cmd.C1, c2: cmd.C2, c3: cmd.C3}
		data, err := builtinFS.ReadFile(td.builtinPath(name))
		if err != nil {
			return nil, &ExecError{Path: cat.templatePath(cmd, name), Cause: err.Error()}
		}
		return data, nil
	}
	rel := cat.templatePath(cmd, name)
	fail := func(err error) ([]byte, error) { return nil, &ExecError{Path: rel, Cause: err.Error()} }
	folder := PromptsPath(cat.Agent)
	if cmd.base != "" {
		folder = cmd.base
	}
	real, err := filepath.EvalSymlinks(filepath.Join(cat.root, filepath.FromSlash(folder)))
	if err != nil {
		return fail(err)
	}
	res, err := insideFolder(real, filepath.Join(cmd.dir, name))
	if err != nil {
		return fail(err)
	}
	data, err := ReadFile(res, MaxTemplateBytes)
	if err != nil {
		return fail(err)
	}
	return data, nil
}

// templatePath names a command's template file for messages.
func (cat *Catalog) templatePath(cmd *Command, name string) string {
	if cmd.builtin {
		return "builtin:" + path.Join(cmd.C1, cmd.C2, cmd.C3, name)
	}
	return path.Join(cat.templateDirPath(cmd), name)
}

func (cat *Catalog) templateDirPath(cmd *Command) string {
	if cmd.base != "" {
		return path.Join(cmd.base, cmd.C2, cmd.C3)
	}
	if cmd.dir == "" && cmd.cfg.appFile != "" { // no template yet: where Climpt would look
		return path.Join(cmd.cfg.promptDir, cmd.C2, cmd.C3)
	}
	return path.Join(PromptsPath(cat.Agent), cmd.C1, cmd.C2, cmd.C3)
}

// usedVars finds the {name} placeholders in a template.
func usedVars(body string) map[string]bool {
	out := map[string]bool{}
	scanVars(body, func(name string) (string, bool) {
		out[name] = true
		return "", false
	})
	return out
}

// substitute replaces each {name} whose name is in vars, in one pass (a
// value holding "{x}" is not expanded again); other braces stay.
func substitute(body string, vars map[string]string) string {
	return scanVars(body, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}

// scanVars walks the {name} placeholders of body (names of letters,
// digits, '_' and '-'), replacing those fn gives a value for.
func scanVars(body string, fn func(name string) (string, bool)) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(body, '{')
		if i < 0 {
			b.WriteString(body)
			return b.String()
		}
		j := i + 1
		for j < len(body) && isVarByte(body[j]) {
			j++
		}
		if j < len(body) && body[j] == '}' && j > i+1 {
			if v, ok := fn(body[i+1 : j]); ok {
				b.WriteString(body[:i])
				b.WriteString(v)
				body = body[j+1:]
				continue
			}
		}
		b.WriteString(body[:i+1])
		body = body[i+1:]
	}
}

func isVarByte(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// Arguments lists what a command takes, for MCP's prompt arguments: the
// option names with a description each, sorted as AcceptedOptions.
func (c *Command) Arguments() [][2]string {
	var out [][2]string
	for _, o := range c.AcceptedOptions() {
		desc := ""
		switch o {
		case OptEdition:
			desc = "edition (default: default)"
			if len(c.Options.Edition) > 0 {
				desc += "; one of " + strings.Join(c.Options.Edition, ", ")
			}
		case OptAdaptation:
			desc = "adaptation (processing mode)"
			if len(c.Options.Adaptation) > 0 {
				desc += "; one of " + strings.Join(c.Options.Adaptation, ", ")
			}
		case VarInputText:
			desc = "the input text ({input_text}, Climpt's stdin)"
		case VarInputTextFile:
			desc = "the input file's path ({input_text_file}, Climpt's --from)"
		case VarDestinationPath:
			desc = "the output destination ({destination_path}, Climpt's --destination)"
		default:
			for _, v := range c.UV {
				if UVPrefix+v.Name == o {
					desc = v.Description
				}
			}
		}
		out = append(out, [2]string{o, desc})
	}
	return out
}
