package app

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagValueError rewrites the flag package's "invalid value "8s" for flag
// -start-timeout: parse error" into what the flag takes: a new user who
// wrote --start-timeout 8s (as --interval 1m works on watch) was told only
// "parse error", with one dash and no hint of the unit. Other errors come
// back unchanged.
func flagValueError(cmd *cli.Command, err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "invalid value ")
	if !ok || cmd == nil {
		return err
	}
	value, rest, ok := strings.Cut(rest, " for flag -")
	if !ok {
		return err
	}
	name, _, ok := strings.Cut(rest, ": ")
	if !ok {
		return err
	}
	flag := "--" + name
	if len(name) == 1 {
		flag = "-" + name
	}
	for _, f := range cmd.Flags {
		if !hasName(f, name) {
			continue
		}
		switch f := f.(type) {
		case *cli.IntFlag:
			return fmt.Errorf("%s takes a whole number, not %s: %s", flag, value, strings.ReplaceAll(f.Usage, "`", ""))
		case *cli.Int64Flag:
			return fmt.Errorf("%s takes a whole number, not %s: %s", flag, value, strings.ReplaceAll(f.Usage, "`", ""))
		case *cli.Float64Flag:
			return fmt.Errorf("%s takes a number, not %s: %s", flag, value, strings.ReplaceAll(f.Usage, "`", ""))
		case *cli.DurationFlag:
			return fmt.Errorf("%s takes a duration such as 30s, 2m or 1h, not %s: %s", flag, value, strings.ReplaceAll(f.Usage, "`", ""))
		case *cli.GenericFlag:
			if _, ok := f.Value.(*seconds); ok {
				return fmt.Errorf("%s takes seconds (90) or a duration (90s, 2m, 1h), not %s: %s", flag, value, strings.TrimSuffix(f.Usage, secondsHint))
			}
		case *cli.BoolFlag:
			return fmt.Errorf("%s takes true or false, not %s: %s", flag, value, strings.ReplaceAll(f.Usage, "`", ""))
		}
	}
	return err
}

// hasName reports whether f answers to name (its name or an alias).
func hasName(f cli.Flag, name string) bool {
	for _, n := range f.Names() {
		if n == name {
			return true
		}
	}
	return false
}
