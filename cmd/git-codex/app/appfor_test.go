package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/gitcodex/git-codex/tools/builtin"
)

// describe renders a command tree: names, usage, descriptions, argument
// usage and every flag with its usage, and whether an action is set.
func describe(cmds []*cli.Command, indent string, b *strings.Builder) {
	for _, c := range cmds {
		fmt.Fprintf(b, "%s%s %q %q %q action=%v\n", indent, strings.Join(c.Names(), "|"), c.Usage, c.Description, c.ArgsUsage, c.Action != nil)
		for _, f := range c.Flags {
			fmt.Fprintf(b, "%s  flag %s\n", indent, f.String())
		}
		describe(c.Subcommands, indent+"    ", b)
	}
}

// TestAppForBuildsTheCommandItRuns: for every command path, the tree appFor
// builds to run it gives that command the same flags as the whole tree, and
// differs from the whole tree only in the other tool commands' flags.
func TestAppForBuildsTheCommandItRuns(t *testing.T) {
	e := &env{reg: builtin.Registry()}
	full := e.app()
	var paths [][]string
	for _, c := range full.Commands {
		if len(c.Subcommands) == 0 {
			paths = append(paths, []string{c.Name})
		}
		for _, s := range c.Subcommands {
			paths = append(paths, []string{c.Name, s.Name})
		}
	}
	if len(paths) < 60 {
		t.Fatalf("only %d command paths", len(paths))
	}
	find := func(app *cli.App, path []string) *cli.Command {
		cmds := app.Commands
		var c *cli.Command
		for _, w := range path {
			if c = findCommand(cmds, w); c == nil {
				return nil
			}
			cmds = c.Subcommands
		}
		return c
	}
	for _, p := range paths {
		for _, args := range [][]string{
			append([]string{"git-codex"}, p...),
			append([]string{"git-codex", "--as", "bob", "--no-pager"}, append(p, "x", "--json")...),
		} {
			lazy := e.appFor(args)
			var want, got strings.Builder
			describe([]*cli.Command{find(full, p)}, "", &want)
			describe([]*cli.Command{find(lazy, p)}, "", &got)
			if got.String() != want.String() {
				t.Errorf("appFor(%q) builds %s as\n%s\nthe whole tree as\n%s", args, strings.Join(p, " "), got.String(), want.String())
			}
		}
	}
	// every run sees every command name at the top, for lookups and
	// suggestions
	names := func(app *cli.App) string {
		var n []string
		for _, c := range app.Commands {
			n = append(n, strings.Join(c.Names(), "|")+"="+c.Usage)
		}
		return strings.Join(n, " ")
	}
	for _, args := range [][]string{{"git-codex"}, {"git-codex", "status"}, {"git-codex", "nosuch"}, {"git-codex", "mail", "send"}} {
		if got, want := names(e.appFor(args)), names(full); got != want {
			t.Errorf("appFor(%q) top level:\n%s\nwhole tree:\n%s", args, got, want)
		}
	}
	// help and completion see the whole tree
	for _, args := range [][]string{{"git-codex", "help", "mail", "send"}, {"git-codex", "mail", "send", "-h"}, {"git-codex", "--generate-bash-completion"}} {
		var want, got strings.Builder
		describe(full.Commands, "", &want)
		describe(e.appFor(args).Commands, "", &got)
		if got.String() != want.String() {
			t.Errorf("appFor(%q) is not the whole tree", args)
		}
	}
}
