package app

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permuteArgs lets flags follow positional arguments (`git codex agent show
// alice --json`): urfave/cli v2 stops parsing flags at the first positional
// argument, so flags found after one are moved in front of it. Tokens after
// "--" are left alone. The global --as (and --token) may also follow the
// command (`git codex mail inbox --as boss`); it is moved back to the front.
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// global flags come first
	i := 0
	for i < len(rest) && strings.HasPrefix(rest[i], "-") {
		if (rest[i] == "--as" || rest[i] == "--token") && i+1 < len(rest) {
			i++
		}
		i++
	}
	out = append(out, rest[:i]...)
	globalEnd := len(out) // hoisted global flags go here, after the others, so they win
	rest = rest[i:]
	cmds := app.Commands
	var cmd *cli.Command
	for len(rest) > 0 {
		next := findCommand(cmds, rest[0])
		if next == nil {
			break
		}
		cmd = next
		out = append(out, rest[0])
		rest = rest[1:]
		cmds = cmd.Subcommands
	}
	if cmd == nil || cmd.SkipFlagParsing {
		return append(out, rest...)
	}
	var flags, positional []string
	help := false
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			positional = append(positional, rest[j:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		if isGlobalAs(cmd, a) {
			if !strings.Contains(a, "=") && j+1 < len(rest) {
				j++
				a += "=" + rest[j]
			}
			out = append(out[:globalEnd], append([]string{a}, out[globalEnd:]...)...)
			globalEnd++
			continue
		}
		flags = append(flags, a)
		help = help || a == "-h" || a == "--help" || a == "-help"
		if !strings.Contains(a, "=") && takesValue(cmd, strings.TrimLeft(a, "-")) {
			if j+1 == len(rest) {
				// no value: let the flag parser say so, rather
				// than take a positional argument as the value
				return append(out, flags...)
			}
			j++
			flags = append(flags, rest[j])
		}
	}
	if help {
		// urfave/cli would take the first positional argument as a help
		// topic: `agent show alice --help` is help for `agent show`.
		return append(out, "--help")
	}
	return append(append(out, flags...), positional...)
}

// isGlobalAs reports an --as or --token flag that belongs to the app, not
// to cmd.
func isGlobalAs(cmd *cli.Command, a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	if (name != "as" && name != "token") || !strings.HasPrefix(a, "--") {
		return false
	}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return false
			}
		}
	}
	return true
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the command's flag name expects a value.
func takesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return false
			}
			return true
		}
	}
	return false
}

// helpArgs turns `help <command...>` into `<command...> --help` when the
// words name a command: urfave/cli v2's help command shows a group (`help
// mail`) without its subcommands and ignores words after the first.
func helpArgs(app *cli.App, args []string) []string {
	if len(args) < 3 || (args[1] != "help" && args[1] != "h") {
		return args
	}
	cmds := app.Commands
	for _, w := range args[2:] {
		c := findCommand(cmds, w)
		if c == nil || c.Name == "help" {
			return args
		}
		cmds = c.Subcommands
	}
	out := append([]string{args[0]}, args[2:]...)
	return append(out, "--help")
}
