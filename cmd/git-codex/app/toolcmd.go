package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

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
	case "session":
		return "open a cycle role's session (seed 001)"
	case "cycle":
		return "start, follow, complete and archive handoff cycles between roles (seed 001)"
	case "handoff":
		return "read and write the handoffs of a cycle"
	}
	return ""
}

// toolCommands builds one command per tool from its input type: fields
// named in the tool's CLI.Args are positional, every other field is a flag
// named after its JSON name (to_human -> --to-human). Each also takes
// --json. Nothing here is written per tool, so a new tool appears in the CLI
// by being registered.
func (e *env) toolCommands() []*cli.Command {
	groups := map[string]*cli.Command{}
	var out []*cli.Command
	for _, t := range e.reg.All() {
		words := strings.Fields(t.CLI.Path)
		if len(words) == 1 { // a top-level command: spawn, ps, kill...
			out = append(out, e.toolCommand(words[0], t))
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
		g.Subcommands = append(g.Subcommands, e.toolCommand(words[1], t))
	}
	return out
}

func (e *env) toolCommand(name string, t *tools.Tool) *cli.Command {
	var argsUsage []string
	for _, a := range t.CLI.Args {
		argsUsage = append(argsUsage, "<"+strings.ReplaceAll(a, "_", "-")+">")
	}
	return &cli.Command{
		Name:        name,
		Usage:       firstSentence(t.Description),
		Description: t.Description + "\n\nTool: " + t.Name + " (permission " + t.Permission + "); same as `git codex call " + t.Name + " '<json>'`.",
		ArgsUsage:   strings.Join(argsUsage, " "),
		Flags:       append(inputFlags(t), jsonFlag()),
		Action: func(c *cli.Context) error {
			args, err := toolArgs(t, c)
			if err != nil {
				return err
			}
			res := e.call(c.Context, c, t.Name, args)
			if !res.OK {
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
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}
}

// inputField is one field of a tool's input as the CLI sees it.
type inputField struct {
	json string
	kind reflect.Kind
	doc  string
}

func inputFields(t *tools.Tool) []inputField {
	var out []inputField
	typ := t.InputType()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		out = append(out, inputField{json: name, kind: f.Type.Kind(), doc: f.Tag.Get("jsonschema")})
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
			continue
		}
		switch f.kind {
		case reflect.Bool:
			flags = append(flags, &cli.BoolFlag{Name: flagName(f.json), Usage: f.doc})
		case reflect.Int, reflect.Int64:
			flags = append(flags, &cli.Int64Flag{Name: flagName(f.json), Usage: f.doc})
		default:
			flags = append(flags, &cli.StringFlag{Name: flagName(f.json), Usage: f.doc})
		}
	}
	return flags
}

// toolArgs turns flags and positional arguments into the tool's JSON
// arguments. Only flags the user set are sent, so the tool's schema decides
// what is missing.
func toolArgs(t *tools.Tool, c *cli.Context) ([]byte, error) {
	if c.NArg() > len(t.CLI.Args) {
		return nil, usageError{fmt.Errorf("%s takes at most %d argument(s), got %d: %s", t.CLI.Path, len(t.CLI.Args), c.NArg(), strings.Join(c.Args().Slice(), " "))}
	}
	m := map[string]any{}
	for i, a := range t.CLI.Args {
		if i < c.NArg() {
			m[a] = c.Args().Get(i)
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
			m[f.json] = c.Int64(name)
		case reflect.Map: // a JSON object (a handoff's payload)
			var v any
			if err := json.Unmarshal([]byte(c.String(name)), &v); err != nil {
				return nil, usageError{fmt.Errorf("--%s takes a JSON object: %v", name, err)}
			}
			m[f.json] = v
		default:
			m[f.json] = c.String(name)
		}
	}
	return json.Marshal(m)
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
