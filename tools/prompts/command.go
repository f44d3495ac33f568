package prompts

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// DefaultAgent is the agent whose registry is read when none is named,
// as in Climpt.
const DefaultAgent = "climpt"

// Where commands come from; a command's Source is the layer that supplied
// its template (a registry.json entry without a template is "registry").
const (
	SourceRegistry = "registry" // described by registry.json only
	SourceTemplate = "template" // a template file in the working tree
	SourceBuiltin  = "builtin"  // a template git codex ships
)

// Command is one C3L command: its registry entry (or its template's front
// matter when registry.json does not list it) and where its templates are.
type Command struct {
	C1          string    `json:"c1"`
	C2          string    `json:"c2"`
	C3          string    `json:"c3"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description"`
	Usage       string    `json:"usage,omitempty"`
	Options     Options   `json:"options"`
	UV          []UserVar `json:"uv,omitempty" jsonschema:"custom variables: pass uv-<name> in prompt_execute's options"`
	Source      string    `json:"source" jsonschema:"registry (registry.json only), template (a file in the working tree) or builtin (shipped with git codex)"`
	// Templates are the template files found for the command, by name
	// (f_default.md, f_bug_detailed.md, ...), sorted.
	Templates []string `json:"templates,omitempty"`

	dir     string // absolute directory of its templates; "" for built-ins without an override
	builtin bool   // templates come from the embedded files
	// base is the folder its templates must stay in when a Climpt
	// configuration names it ("": the agent's prompts folder); cfg is
	// that configuration (climptconfig.go).
	base string
	cfg  climptConfig
}

// Config is the command's Climpt configuration prefix (seed 004's
// configParam): c1 for the default agent, <agent>-<c1> otherwise.
func (c *Command) Config() string { return c.cfg.name }

// ConfigFiles are the Climpt configuration files that apply to the
// command (its prefix's app and user files, where they exist).
func (c *Command) ConfigFiles() []string {
	var out []string
	for _, f := range []string{c.cfg.appFile, c.cfg.userFile} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Options are what a command accepts, as registry.json and Climpt's front
// matter declare them.
type Options struct {
	Edition     []string `json:"edition,omitempty"`
	Adaptation  []string `json:"adaptation,omitempty"`
	File        bool     `json:"file"`
	Stdin       bool     `json:"stdin"`
	Destination bool     `json:"destination"`
}

// UserVar is a custom variable ({uv-<name>} in a template, --uv-<name> in
// Climpt's CLI).
type UserVar struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Key is the command's C3L name, "c1 c2 c3".
func (c *Command) Key() string { return Key(c.C1, c.C2, c.C3) }

// Key joins a C3L triple.
func Key(c1, c2, c3 string) string { return c1 + " " + c2 + " " + c3 }

// namePattern is what a C3L word or an agent name may be: it becomes a
// directory name, so nothing that could leave the prompts folder.
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`) })

// ValidName reports an error naming field when s cannot be a C3L word or
// an agent name ("..", "/", empty, too long).
func ValidName(field, s string) error {
	if !namePattern().MatchString(s) {
		return fmt.Errorf("%s %q is not a valid name: use letters, digits, '-' and '_' (at most 100), starting with a letter or digit", field, s)
	}
	return nil
}

// hasUV reports whether the command declares the custom variable name.
func (c *Command) hasUV(name string) bool {
	for _, v := range c.UV {
		if v.Name == name {
			return true
		}
	}
	return false
}

// document is the text the search index sees: the C3L words (as Climpt
// indexes them), the description and the usage.
func (c *Command) document() string {
	return strings.Join([]string{c.C1, c.C2, c.C3, c.Description, c.Usage}, " ")
}
