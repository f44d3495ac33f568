package app

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

func (e *env) callCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call a tool with JSON arguments, exactly as an MCP client would",
		ArgsUsage: "<tool> [<json> | -]",
		Description: "Prints the result envelope on stdout: {\"ok\":true,\"data\":...} or\n" +
			"{\"ok\":false,\"error\":{\"code\",\"message\",\"details\"}} with a non-zero exit.\n" +
			"Arguments default to {}; \"-\" reads them from standard input.",
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usageError{err: fmt.Errorf("call takes a tool name and one JSON argument")}
			}
			args := []byte(c.Args().Get(1))
			if c.Args().Get(1) == "-" {
				b, err := io.ReadAll(e.stdin)
				if err != nil {
					return fmt.Errorf("read arguments: %w", err)
				}
				args = b
			}
			res := e.call(c.Context, c, c.Args().First(), args)
			if err := writeJSON(e.stdout, res); err != nil {
				return err
			}
			if !res.OK {
				fmt.Fprintf(e.stderr, "git codex: %s: %s\n", res.Error.Code, res.Error.Message)
				return silentError{res.Error.Code}
			}
			return nil
		},
	}
}
