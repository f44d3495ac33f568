package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// seconds is the flag of an integer input that counts seconds (its doc
// says so: spawn's start_timeout, lock_acquire's ttl_seconds). The tool
// takes a whole number of seconds; on the command line a person writes
// 90, or 90s, 2m, 1h30m as watch's --interval takes them, and the flag
// hands the tool the seconds.
type seconds struct {
	n   int64
	set bool
}

func (s *seconds) Set(v string) error {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		s.n, s.set = n, true
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("takes seconds (90) or a duration (90s, 2m, 1h), not %q", v)
	}
	if d%time.Second != 0 {
		return fmt.Errorf("takes whole seconds, not %q", v)
	}
	s.n, s.set = int64(d/time.Second), true
	return nil
}

func (s *seconds) String() string {
	if s == nil || !s.set {
		return ""
	}
	return strconv.FormatInt(s.n, 10)
}

// secondsHint ends the usage of a flag that counts seconds.
const secondsHint = " (`SECONDS`, or a duration: 90s, 2m)"

// countsSeconds reports whether an integer input's doc says it counts
// seconds.
func countsSeconds(doc string) bool {
	for _, w := range strings.FieldsFunc(doc, func(r rune) bool { return r == ' ' || r == '(' || r == ',' }) {
		if w == "seconds" {
			return true
		}
	}
	return false
}
