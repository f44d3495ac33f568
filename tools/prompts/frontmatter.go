package prompts

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// frontMatter is a template's YAML header, as Climpt writes it (C3L v0.5):
// c1/c2/c3, title, description, usage, options and uv. Fields are decoded
// leniently (a list or a single string, a uv list of one-key maps or a
// map), since registries in use were written by hand and by generators.
type frontMatter struct {
	C1          string `yaml:"c1"`
	C2          string `yaml:"c2"`
	C3          string `yaml:"c3"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	Usage       string `yaml:"usage"`
	Options     struct {
		Edition     stringList `yaml:"edition"`
		Input       stringList `yaml:"input"` // the older name of edition
		Adaptation  stringList `yaml:"adaptation"`
		File        flexBool   `yaml:"file"`
		Stdin       flexBool   `yaml:"stdin"`
		Destination flexBool   `yaml:"destination"`
	} `yaml:"options"`
	UV uvList `yaml:"uv"`
}

// errNoFrontMatter marks a template without a front matter block.
var errNoFrontMatter = errors.New("no front matter")

// splitFrontMatter separates a template into its front matter (without the
// --- fences) and its body. A file that does not start with "---" has no
// front matter; one that opens the block but never closes it is an error,
// with the line the block started on.
func splitFrontMatter(text []byte) (head, body []byte, err error) {
	text = bytes.TrimPrefix(text, []byte("\ufeff"))
	first, rest, _ := bytes.Cut(text, []byte("\n"))
	if strings.TrimRight(string(first), " \t\r") != "---" {
		return nil, text, errNoFrontMatter
	}
	off := 0
	for {
		line, next, found := bytes.Cut(rest[off:], []byte("\n"))
		if strings.TrimRight(string(line), " \t\r") == "---" {
			return rest[:off], next, nil
		}
		if !found {
			return nil, nil, fmt.Errorf("line 1: front matter opened with --- is never closed")
		}
		off += len(line) + 1
	}
}

// parseFrontMatter decodes a front matter block. YAML errors name their
// line within the file (the block starts on line 2).
func parseFrontMatter(head []byte) (frontMatter, error) {
	var fm frontMatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return frontMatter{}, fmt.Errorf("front matter: %s", shiftYAMLLines(err.Error(), 1))
	}
	return fm, nil
}

// shiftYAMLLines rewrites "line N" in a YAML error to count from the top
// of the file rather than from the start of the block.
func shiftYAMLLines(msg string, by int) string {
	var out strings.Builder
	for {
		i := strings.Index(msg, "line ")
		if i < 0 {
			out.WriteString(msg)
			return out.String()
		}
		out.WriteString(msg[:i+5])
		msg = msg[i+5:]
		j := 0
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(msg[:j]); err == nil {
			out.WriteString(strconv.Itoa(n + by))
		}
		msg = msg[j:]
	}
}

// options converts the front matter's options.
func (fm frontMatter) options() Options {
	o := Options{
		Edition:     fm.Options.Edition,
		Adaptation:  fm.Options.Adaptation,
		File:        bool(fm.Options.File),
		Stdin:       bool(fm.Options.Stdin),
		Destination: bool(fm.Options.Destination),
	}
	if len(o.Edition) == 0 {
		o.Edition = fm.Options.Input
	}
	return o
}

// stringList is a YAML or JSON list of strings that may also be written as
// one string.
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" || n.Value == "" {
			*l = nil
			return nil
		}
		*l = stringList{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(stringList, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: expected a list of names", c.Line)
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: expected a name or a list of names", n.Line)
}

// flexBool is a boolean that may also be written as a string ("true") or a
// list (true when any element is true), as older registries did.
type flexBool bool

func (b *flexBool) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		v, _ := strconv.ParseBool(strings.TrimSpace(n.Value))
		*b = flexBool(v)
		return nil
	case yaml.SequenceNode:
		for _, c := range n.Content {
			var e flexBool
			if err := e.UnmarshalYAML(c); err != nil {
				return err
			}
			if e {
				*b = true
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: expected true or false", n.Line)
}

// uvList is Climpt's uv field: a list of one-key maps (name: description),
// a map, or an empty string for none.
type uvList []UserVar

func (u *uvList) UnmarshalYAML(n *yaml.Node) error {
	*u = nil
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.TrimSpace(n.Value) != "" && n.Tag != "!!null" {
			*u = uvList{{Name: n.Value}}
		}
	case yaml.MappingNode:
		u.addPairs(n)
	case yaml.SequenceNode:
		for _, c := range n.Content {
			switch c.Kind {
			case yaml.MappingNode:
				u.addPairs(c)
			case yaml.ScalarNode:
				if c.Value != "" {
					*u = append(*u, UserVar{Name: c.Value})
				}
			default:
				return fmt.Errorf("line %d: uv: expected name: description", c.Line)
			}
		}
	default:
		return fmt.Errorf("line %d: uv: expected a list of name: description", n.Line)
	}
	return nil
}

func (u *uvList) addPairs(m *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		*u = append(*u, UserVar{Name: m.Content[i].Value, Description: m.Content[i+1].Value})
	}
}
