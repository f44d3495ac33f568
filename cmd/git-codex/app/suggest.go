package app

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// unknownSubcommand finds a word that should name a subcommand of a group
// (`git codex mail sned --to boss`) but names none, and reports it as
// such, with the closest name: urfave/cli would go on to parse the rest as
// the group's flags and report the first flag as undefined.
func unknownSubcommand(app *cli.App, args []string) error {
	rest := args[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		if rest[0] == "--as" && len(rest) > 1 {
			rest = rest[1:]
		}
		rest = rest[1:]
	}
	cmds := app.Commands
	path := []string{"git codex"}
	for len(rest) > 0 {
		c := findCommand(cmds, rest[0])
		if c == nil {
			return nil // the app's CommandNotFound reports an unknown top-level word
		}
		path = append(path, c.Name)
		rest = rest[1:]
		if len(c.Subcommands) == 0 {
			return nil
		}
		cmds = c.Subcommands
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") || rest[0] == "help" || rest[0] == "h" {
			return nil
		}
		if findCommand(cmds, rest[0]) == nil {
			// help names the group's -h, which the usage line prints: a
			// "see ... -h" here as well was followed by "Run `git codex
			// help`", two pointers at two places
			return usageError{err: fmt.Errorf("unknown command %q for %q%s", rest[0], strings.Join(path, " "), didYouMean(rest[0], cmds)), help: strings.Join(path, " ")}
		}
	}
	return nil
}

// didYouMean suggests the command name closest to a mistyped word, if one
// is close: within two edits, or starting with it.
func didYouMean(word string, cmds []*cli.Command) string {
	best, bestDist := "", 3
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			d := editDistance(word, n)
			if strings.HasPrefix(n, word) && d > 0 {
				d = min(d, 2)
			}
			if d < bestDist {
				best, bestDist = c.Name, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance, counting a swap of two
// neighbouring letters (sned, send) as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
