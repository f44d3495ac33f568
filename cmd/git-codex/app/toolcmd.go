package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// groupUsage describes the command groups tools are placed in.
func groupUsage(group string) string {
	switch group {
	case "mail":
		return "send, list, read and answer mail between agents and people"
	case "agent":
		return "register agents and look at them"
	case "decision":
		return "log decisions and their reasoning"
	case "config":
		return "show and change settings, including the permission policy"
	case "task":
		return "create, claim, assign and move along tasks, one holder at a time"
	case "lock":
		return "take, release and list named locks on shared resources"
	case "review":
		return "the review loop: request a review of your branch, send a reviewer's feedback"
	case "conflict":
		return "list the conflicts sync settled: a lock, task or review granted twice"
	case "prompt":
		return "search, describe and execute the prompt registry's commands (.agent/<agent>/registry.json)"
	case "session":
		return "open a cycle role's session (seed 001)"
	case "cycle":
		return "start, follow, complete and archive handoff cycles between roles (seed 001)"
	case "handoff":
		return "read and write the handoffs of a cycle"
	case "delegate":
		return "hand a prompt to another agent CLI (claude, codex, gemini) as a tracked session: query, continue, interrupt, abort (seed 002)"
	case "epic":
		return "run an epic: its branch, its tasks' review queue, approvals that squash-merge their pull requests, and its own pull request"
	case "github":
		return "open pull requests and issues on GitHub, and retry the calls GitHub refused or never answered"
	}
	return ""
}

// toolCommands builds one command per tool from its input type: fields
// named in the tool's CLI.Args are positional, every other field is a flag
// named after its JSON name (to_human -> --to-human). Each also takes
// --json. Nothing here is written per tool, so a new tool appears in the CLI
// by being registered.
func (e *env) toolCommands(lazy *lazyTree) []*cli.Command {
	groups := map[string]*cli.Command{}
	var out []*cli.Command
	// a tool command may head a group of its own (archive, archive
	// restore): its group's subcommands go under it
	all := slices.Clone(e.reg.All())
	sort.SliceStable(all, func(i, j int) bool {
		return len(strings.Fields(all[i].CLI.Path)) < len(strings.Fields(all[j].CLI.Path))
	})
	for _, t := range all {
		words := strings.Fields(t.CLI.Path)
		if len(words) == 1 { // a top-level command: spawn, ps, kill...
			c := e.toolCommand(words[0], t, lazy)
			groups[words[0]] = c
			out = append(out, c)
			continue
		}
		if len(words) != 2 {
			continue // reachable through `git codex call`
		}
		g, ok := groups[words[0]]
		if !ok {
			g = &cli.Command{Name: words[0], Usage: groupUsage(words[0])}
			groups[words[0]] = g
			out = append(out, g)
		}
		if lazy != nil && lazy.group != words[0] {
			continue // not run: its name is enough
		}
		g.Subcommands = append(g.Subcommands, e.toolCommand(words[1], t, lazy))
	}
	if g, ok := groups["delegate"]; ok && (lazy == nil || lazy.group == "delegate") {
		g.Subcommands = append(g.Subcommands, e.delegateExportCommand())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lazyTree is what appFor leaves out of the command tree: the subcommands
// of every group but the one run, and the flags of every tool command
// until fill builds them. nil means the whole tree.
type lazyTree struct {
	group string                  // the group whose subcommands are built
	fills map[*cli.Command]func() // tool commands whose flags are not built yet
}

func (e *env) toolCommand(name string, t *tools.Tool, lazy *lazyTree) *cli.Command {
	var argsUsage []string
	for _, a := range t.CLI.Args {
		argsUsage = append(argsUsage, "<"+strings.ReplaceAll(a, "_", "-")+">")
	}
	c := &cli.Command{
		Name:        name,
		Usage:       lowerFirst(firstSentence(t.Description)),
		Description: t.Description + argsHelp(t) + "\n\nTool: " + t.Name + " (permission " + t.Permission + "); same as `git codex call " + t.Name + " '<json>'`.",
		ArgsUsage:   strings.Join(argsUsage, " "),
		Action: func(c *cli.Context) error {
			args, err := e.toolArgs(t, c)
			if ue, ok := err.(usageError); ok && ue.help == "" {
				// point at this command's help (--payload '{...}' sent a
				// user to the whole of `git codex help`)
				ue.help = "git codex " + t.CLI.Path
				return ue
			}
			if err != nil {
				return err
			}
			res := e.call(c.Context, c, t.Name, args)
			if !res.OK {
				if len(res.Warnings) > 0 {
					return refused{err: res.Error, warnings: res.Warnings}
				}
				return res.Error
			}
			if c.Bool("json") && t.CLI.Envelope {
				return writeJSON(e.stdout, res)
			}
			if c.Bool("json") {
				return writeJSON(e.stdout, res.Data)
			}
			return e.render(t.Name, res.Data)
		},
	}
	fill := func() { c.Flags = append(inputFlags(t), jsonFlag()) }
	if lazy == nil {
		fill()
	} else {
		lazy.fills[c] = fill
	}
	return c
}

// argsHelp describes a tool's positional arguments as its flags are
// described (what send_feedback's <feedback-type> may be); "" without any.
func argsHelp(t *tools.Tool) string {
	var lines []string
	width := 0
	for _, f := range inputFields(t) {
		if isPositional(t, f.json) && f.doc != "" {
			width = max(width, len(flagName(f.json))+2)
		}
	}
	for _, a := range t.CLI.Args {
		for _, f := range inputFields(t) {
			if f.json == a && f.doc != "" {
				lines = append(lines, fmt.Sprintf("   %-*s  %s", width, "<"+flagName(a)+">", f.doc))
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n\nArguments:\n" + strings.Join(lines, "\n")
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}
}

// inputField is one field of a tool's input as the CLI sees it.
type inputField struct {
	json     string
	kind     reflect.Kind
	strings  bool // a map of strings: a repeatable KEY=VALUE flag (else a map is one JSON object)
	objects  bool // a list of objects (create_issues' issues): one JSON array
	doc      string
	required bool // no omitempty: the tool's schema requires it
}

// textFields are the inputs that hold long free text: each also gets a
// --<name>-file flag (a path, or "-" for standard input), as gh's
// --body-file, so a large body need not pass through the shell.
var textFields = map[string]bool{"body": true, "description": true, "prompt": true}

func fileFlagName(jsonName string) string { return flagName(jsonName) + "-file" }

func inputFields(t *tools.Tool) []inputField {
	var out []inputField
	typ := t.InputType()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		required := !strings.Contains(","+opts+",", ",omitempty,")
		strs := f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.String
		objs := f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct
		out = append(out, inputField{json: name, kind: f.Type.Kind(), strings: strs, objects: objs, doc: f.Tag.Get("jsonschema"), required: required})
	}
	return out
}

func isPositional(t *tools.Tool, jsonName string) bool {
	for _, a := range t.CLI.Args {
		if a == jsonName {
			return true
		}
	}
	return false
}

func flagName(jsonName string) string { return strings.ReplaceAll(jsonName, "_", "-") }

func inputFlags(t *tools.Tool) []cli.Flag {
	var flags []cli.Flag
	for _, f := range inputFields(t) {
		if isPositional(t, f.json) {
			if textFields[f.json] && f.kind == reflect.String {
				flags = append(flags, &cli.StringFlag{Name: fileFlagName(f.json), Usage: "read <" + flagName(f.json) + "> from `FILE` (\"-\": standard input) instead of the argument"})
			}
			continue
		}
		usage := f.doc
		if f.required {
			usage += " (required)"
			if textFields[f.json] {
				usage = f.doc + " (required: this or --" + fileFlagName(f.json) + ")"
			}
		}
		switch f.kind {
		case reflect.Bool:
			flags = append(flags, &cli.BoolFlag{Name: flagName(f.json), Usage: usage})
		case reflect.Int, reflect.Int64:
			// urfave/cli shows an int flag's Go default ("(default: 0)"),
			// which is not the tool's: show the one the doc names instead
			usage, def := cutDefault(usage)
			if countsSeconds(f.doc) {
				flags = append(flags, &cli.GenericFlag{Name: flagName(f.json), Usage: usage + secondsHint, DefaultText: def, Value: &seconds{}})
				break
			}
			flags = append(flags, &cli.Int64Flag{Name: flagName(f.json), Usage: usage, DefaultText: def})
		case reflect.Map:
			if f.strings {
				flags = append(flags, &cli.GenericFlag{Name: flagName(f.json), Usage: usage + " (repeat `KEY=VALUE`)", Value: &keyValues{}})
			} else {
				flags = append(flags, &cli.StringFlag{Name: flagName(f.json), Usage: usage + " (a JSON object)"})
			}
		case reflect.Slice:
			if f.objects {
				flags = append(flags, &cli.StringFlag{Name: flagName(f.json), Usage: usage + " (a JSON array of objects)"})
			} else {
				flags = append(flags, &cli.GenericFlag{Name: flagName(f.json), Usage: usage + " (repeat the flag for each `ITEM`, or give one JSON array)", Value: &stringList{}})
			}
		default:
			flags = append(flags, &cli.StringFlag{Name: flagName(f.json), Usage: usage})
		}
		if textFields[f.json] && f.kind == reflect.String {
			flags = append(flags, &cli.StringFlag{Name: fileFlagName(f.json), Usage: "read the " + flagName(f.json) + " from `FILE` (\"-\": standard input)"})
		}
	}
	return flags
}

// toolArgs turns flags and positional arguments into the tool's JSON
// arguments. Only flags the user set are sent. A required input that is
// missing is a usage error named as the CLI spells it (argument <mail-id>,
// flag --subject), before anything is called: the tool's schema would name
// the JSON field instead.
func (e *env) toolArgs(t *tools.Tool, c *cli.Context) ([]byte, error) {
	if c.NArg() > len(t.CLI.Args) {
		return nil, usageError{err: fmt.Errorf("%s takes at most %d argument(s), got %d: %s", t.CLI.Path, len(t.CLI.Args), c.NArg(), strings.Join(c.Args().Slice(), " ")), help: "git codex " + t.CLI.Path}
	}
	m := map[string]any{}
	for i, a := range t.CLI.Args {
		if i < c.NArg() {
			m[a] = rawText(c.Args().Get(i))
		}
	}
	for _, f := range inputFields(t) {
		name := flagName(f.json)
		if isPositional(t, f.json) || !c.IsSet(name) {
			continue
		}
		switch f.kind {
		case reflect.Bool:
			m[f.json] = c.Bool(name)
		case reflect.Int, reflect.Int64:
			if s, ok := c.Generic(name).(*seconds); ok {
				m[f.json] = s.n
				break
			}
			m[f.json] = c.Int64(name)
		case reflect.Map:
			if f.strings {
				m[f.json] = c.Generic(name).(*keyValues).m
				break
			}
			var v any // a JSON object (a handoff's payload)
			if err := json.Unmarshal([]byte(c.String(name)), &v); err != nil {
				return nil, usageError{err: fmt.Errorf("--%s takes a JSON object: %v", name, err)}
			}
			m[f.json] = v
		case reflect.Slice:
			if !f.objects {
				items := []rawText{}
				for _, it := range c.Generic(name).(*stringList).items {
					items = append(items, rawText(it))
				}
				m[f.json] = items
				break
			}
			var v []any // a list of objects (create_issues' issues)
			if err := json.Unmarshal([]byte(c.String(name)), &v); err != nil {
				return nil, usageError{err: fmt.Errorf("--%s takes a JSON array: %v", name, err)}
			}
			m[f.json] = v
		default:
			m[f.json] = rawText(c.String(name))
		}
	}
	if err := e.readTextFiles(t, c, m); err != nil {
		return nil, err
	}
	if err := missingInput(t, m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// rawText is a string argument as the JSON the registry checks. Text that
// is not UTF-8 is sent with its bad bytes as they are: json.Marshal would
// replace them with U+FFFD, and the registry could not refuse what it never
// saw (it names the field, as it does for `call` and MCP).
type rawText string

func (s rawText) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	var b bytes.Buffer
	b.WriteByte('"')
	rest := string(s)
	for rest != "" {
		r, size := utf8.DecodeRuneInString(rest)
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(rest[0])
		} else {
			q, _ := json.Marshal(rest[:size])
			b.Write(q[1 : len(q)-1])
		}
		rest = rest[size:]
	}
	b.WriteByte('"')
	return b.Bytes(), nil
}

// readTextFiles fills text fields given as --<name>-file.
func (e *env) readTextFiles(t *tools.Tool, c *cli.Context, m map[string]any) error {
	for _, f := range inputFields(t) {
		ff := fileFlagName(f.json)
		if !textFields[f.json] || !c.IsSet(ff) {
			continue
		}
		if _, both := m[f.json]; both {
			if isPositional(t, f.json) {
				return usageError{err: fmt.Errorf("give <%s> or --%s, not both", flagName(f.json), ff)}
			}
			return usageError{err: fmt.Errorf("give --%s or --%s, not both", flagName(f.json), ff)}
		}
		var b []byte
		var err error
		if path := c.String(ff); path == "-" {
			b, err = io.ReadAll(io.LimitReader(e.stdin, tools.MaxArgsBytes+1))
		} else {
			if !filepath.IsAbs(path) {
				path = filepath.Join(e.dir, path)
			}
			b, err = os.ReadFile(path)
		}
		if err != nil {
			return usageError{err: fmt.Errorf("--%s: %w", ff, err)}
		}
		m[f.json] = string(b)
	}
	return nil
}

// missingInput names the required inputs the command line left out.
func missingInput(t *tools.Tool, m map[string]any) error {
	var args, flags []string
	for _, f := range inputFields(t) {
		if _, ok := m[f.json]; ok || !f.required {
			continue
		}
		switch {
		case isPositional(t, f.json) && textFields[f.json]:
			args = append(args, "<"+flagName(f.json)+"> (or --"+fileFlagName(f.json)+")")
		case isPositional(t, f.json):
			args = append(args, "<"+flagName(f.json)+">")
		case textFields[f.json]:
			flags = append(flags, "--"+flagName(f.json)+" (or --"+fileFlagName(f.json)+")")
		default:
			flags = append(flags, "--"+flagName(f.json))
		}
	}
	var parts []string
	if len(args) > 0 {
		parts = append(parts, plural(len(args), "argument")+" "+strings.Join(args, " "))
	}
	if len(flags) > 0 {
		parts = append(parts, plural(len(flags), "flag")+" "+strings.Join(flags, ", "))
	}
	if len(parts) == 0 {
		return nil
	}
	return usageError{err: fmt.Errorf("%s: missing %s", t.CLI.Path, strings.Join(parts, " and ")), help: "git codex " + t.CLI.Path}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// cutDefault splits "... (default N)" at the end of a usage into the usage
// and "N"; def is "" without one.
func cutDefault(usage string) (rest, def string) {
	i := strings.LastIndex(usage, " (default ")
	if i < 0 || !strings.HasSuffix(usage, ")") || strings.Contains(usage[i:], "(required") {
		return usage, ""
	}
	return usage[:i], usage[i+len(" (default ") : len(usage)-1]
}

// lowerFirst starts a one-line usage in lower case, as the other commands'
// are ("list the ..."), unless the first word is an acronym ("MCP ...").
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && !(s[1] >= 'A' && s[1] <= 'Z') {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

func firstSentence(s string) string {
	for i := 0; i+1 < len(s); i++ {
		// ". " ends a sentence, except after "e.g" or "i.e"
		if s[i] == '.' && s[i+1] == ' ' && !strings.HasSuffix(s[:i], "e.g") && !strings.HasSuffix(s[:i], "i.e") {
			return s[:i]
		}
	}
	return strings.TrimSuffix(s, ".")
}
