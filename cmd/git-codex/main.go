// Command git-codex is git codex: coordination for teams of AI coding agents,
// kept in git. Installed on PATH it runs as `git codex <command>`; `git codex
// mcp` is the stdio MCP server each agent launches.
package main

import (
	"os"

	"github.com/gitcodex/git-codex/cmd/git-codex/app"
)

func main() {
	os.Exit(app.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
