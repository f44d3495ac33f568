package gitrepo

import (
	"bytes"
	"fmt"
	"strings"
)

// ConfigEntry is one variable of a git config file, as git reads it: the
// section and key lowercased (they are case-blind), the subsection as
// written (it is not, unless given in the old "[section.sub]" form).
// HasSubsection tells `[s ""]` (an empty subsection) from `[s]`. Bare is set
// for a key written without "=" (git's implicit true); Value is then "".
type ConfigEntry struct {
	Section, Subsection, Key string
	HasSubsection            bool
	Value                    string
	Bare                     bool
}

// Name is the entry's name as `git config --list` prints it:
// "section.subsection.key", "section.key", or "key" for a variable before
// any section header (which git accepts).
func (e ConfigEntry) Name() string {
	if e.Section == "" {
		return e.Key
	}
	if e.HasSubsection {
		return e.Section + "." + e.Subsection + "." + e.Key
	}
	return e.Section + "." + e.Key
}

// ParseConfig reads a git config file the way git's config.c does
// (comments, quoting, escapes, continuation lines, whitespace folding),
// without following includes: callers that care look for "include" and
// "includeif" sections themselves. It replaces go-git's format/config,
// which linked gcfg and, through it, more start-up cost than the two or
// three variables git codex reads are worth.
func ParseConfig(data []byte) ([]ConfigEntry, error) {
	p := configParser{data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), line: 1}
	return p.parse()
}

// ConfigValue returns the last value of section.key (subsection "" for
// none), as git does when a key is set more than once, "true" for a bare
// key; ok is false if the key is not set.
func ConfigValue(entries []ConfigEntry, section, subsection, key string) (value string, ok bool) {
	section, key = strings.ToLower(section), strings.ToLower(key)
	for _, e := range entries {
		if e.Section == section && e.Subsection == subsection && e.HasSubsection == (subsection != "") && e.Key == key {
			value, ok = e.Value, true
			if e.Bare {
				value = "true"
			}
		}
	}
	return value, ok
}

type configParser struct {
	data []byte
	pos  int
	line int
}

const configEOF = -1

// next returns the next character, "\r\n" as '\n', and configEOF at the end.
func (p *configParser) next() int {
	if p.pos >= len(p.data) {
		p.pos++ // so that back() after the end stays at the end
		return configEOF
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return int(c)
}

func (p *configParser) errorf(format string, args ...any) error {
	return fmt.Errorf("gitstate: bad config line %d: %s", p.line, fmt.Sprintf(format, args...))
}

func (p *configParser) parse() ([]ConfigEntry, error) {
	var out []ConfigEntry
	var section, subsection string
	var hasSub, comment bool
	for {
		c := p.next()
		if c == configEOF {
			return out, nil
		}
		if c == '\n' {
			comment = false
			continue
		}
		if comment || isConfigSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			var err error
			if section, subsection, hasSub, err = p.header(); err != nil {
				return nil, err
			}
			continue
		}
		if !isAlpha(c) {
			return nil, p.errorf("unexpected %q", rune(c))
		}
		e, err := p.variable(c)
		if err != nil {
			return nil, err
		}
		e.Section, e.Subsection, e.HasSubsection = section, subsection, hasSub
		out = append(out, e)
	}
}

// header reads a section header after its '[': "section]",
// `section "subsection"]` or the old "section.subsection]".
func (p *configParser) header() (section, subsection string, hasSub bool, err error) {
	var name strings.Builder
	for {
		c := p.next()
		switch {
		case c == configEOF || c == '\n':
			return "", "", false, p.errorf("unterminated section header")
		case c == ']':
			s := strings.ToLower(name.String())
			if s == "" {
				return "", "", false, p.errorf("empty section name")
			}
			sec, sub, dotted := strings.Cut(s, ".")
			return sec, sub, dotted, nil
		case isConfigSpace(c):
			sub, err := p.subsection()
			if err != nil {
				return "", "", false, err
			}
			if name.Len() == 0 {
				return "", "", false, p.errorf("empty section name")
			}
			return strings.ToLower(name.String()), sub, true, nil
		case isAlnum(c) || c == '-' || c == '.':
			name.WriteByte(byte(c))
		default:
			return "", "", false, p.errorf("bad character %q in a section name", rune(c))
		}
	}
}

// subsection reads ` "subsection"]` after a section name and a space.
func (p *configParser) subsection() (string, error) {
	c := p.next()
	for isConfigSpace(c) {
		c = p.next()
	}
	if c != '"' {
		return "", p.errorf("a subsection must be quoted")
	}
	var sub strings.Builder
	for {
		c = p.next()
		switch c {
		case configEOF, '\n':
			return "", p.errorf("unterminated subsection")
		case '"':
			if p.next() != ']' {
				return "", p.errorf("missing ']' after a subsection")
			}
			return sub.String(), nil
		case '\\':
			c = p.next()
			if c == configEOF || c == '\n' {
				return "", p.errorf("unterminated subsection")
			}
		}
		sub.WriteByte(byte(c))
	}
}

// variable reads "key = value" or a bare "key" starting at its first
// character (git refuses anything else after a key, a comment included).
func (p *configParser) variable(first int) (ConfigEntry, error) {
	key := []byte{byte(first)}
	c := p.next()
	for isAlnum(c) || c == '-' {
		key = append(key, byte(c))
		c = p.next()
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := ConfigEntry{Key: strings.ToLower(string(key))}
	switch c {
	case '\n', configEOF:
		e.Bare = true
		return e, nil
	case '=':
		v, err := p.value()
		e.Value = v
		return e, err
	}
	return e, p.errorf("bad character %q after key %q", rune(c), key)
}

// value reads a value up to the end of its line, as git's parse_value:
// quotes toggle quoting and are dropped, unquoted whitespace runs become
// spaces (trimmed at both ends), '#' and ';' start a comment outside quotes,
// and \n \t \b \" \\ and backslash-newline are the only escapes.
func (p *configParser) value() (string, error) {
	var v []byte
	quote, comment := false, false
	spaces := 0
	for {
		c := p.next()
		if c == '\n' || c == configEOF {
			if quote {
				return "", p.errorf("unterminated quote")
			}
			return string(v), nil
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quote {
			if len(v) > 0 {
				spaces++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n', configEOF: // git reads the end of the file as a newline
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", p.errorf("bad escape in a value")
			}
		case '"':
			quote = !quote
			continue
		}
		v = append(v, byte(c))
	}
}

func isConfigSpace(c int) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'
}
func isAlpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c int) bool { return isAlpha(c) || c >= '0' && c <= '9' }
