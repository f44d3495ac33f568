package app

import (
	"fmt"

	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// toolInfo is how `git codex tools --json` describes a tool.
type toolInfo struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Permission   string `json:"permission"`
	Command      string `json:"command,omitempty"`
	InputSchema  any    `json:"input_schema"`
	OutputSchema any    `json:"output_schema"`
}

func infoOf(t *tools.Tool) toolInfo {
	cmd := ""
	if t.CLI.Path != "" {
		cmd = "git codex " + t.CLI.Path
	}
	return toolInfo{t.Name, t.Description, t.Permission, cmd, t.InputSchema(), t.OutputSchema()}
}

func (e *env) toolsCommand() *cli.Command {
	return &cli.Command{
		Name:      "tools",
		Usage:     "list the tools (the same ones `git codex mcp` serves), or describe one with its schemas",
		ArgsUsage: "[<tool>]",
		Flags: []cli.Flag{jsonFlag(),
			&cli.BoolFlag{Name: "markdown", Usage: "print the tool reference (docs/TOOLS.md) as Markdown"}},
		Action: func(c *cli.Context) error {
			if c.Bool("markdown") {
				_, err := fmt.Fprint(e.stdout, toolsMarkdown(e.reg))
				return err
			}
			if name := c.Args().First(); name != "" {
				t, ok := e.reg.Lookup(name)
				if !ok {
					return tools.Errorf(tools.ToolNotFound, "no tool named %q; list them with `git codex tools`", name)
				}
				if c.Bool("json") {
					return writeJSON(e.stdout, infoOf(t))
				}
				info := infoOf(t)
				fmt.Fprintf(e.stdout, "%s\n\n%s\n\npermission: %s\n", t.Name, t.Description, t.Permission)
				if info.Command != "" {
					fmt.Fprintf(e.stdout, "command:    %s\n", info.Command)
				}
				fmt.Fprintln(e.stdout, "\ninput schema:")
				return writeJSON(e.stdout, t.InputSchema())
			}
			all := e.reg.All()
			if c.Bool("json") {
				infos := make([]toolInfo, len(all))
				for i, t := range all {
					infos[i] = infoOf(t)
				}
				return writeJSON(e.stdout, infos)
			}
			tp := e.table("TOOL", "PERMISSION", "COMMAND", "DESCRIPTION")
			for _, t := range all {
				info := infoOf(t)
				tp.AddField(t.Name)
				tp.AddField(t.Permission)
				tp.AddField(info.Command)
				tp.AddField(firstSentence(t.Description))
				tp.EndRow()
			}
			return tp.Render()
		},
	}
}
