package app

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table prints rows the way gh does: on a terminal, aligned columns that
// fit the terminal's width (the widest columns cut short with "..."), under
// a header; piped, tab-separated lines without a header, for scripts. It
// replaces go-gh's tableprinter, whose text-width package linked a terminal
// UI library (lipgloss and a dozen more packages) that every git codex
// process initialised at start.
type table struct {
	out   io.Writer
	tty   bool
	width int
	rows  [][]cell
}

type cell struct {
	text  string
	color func(string) string // applied after padding, on a terminal
}

func newTable(out io.Writer, tty bool, width int, headers ...string) *table {
	t := &table{out: out, tty: tty, width: width}
	if tty {
		for _, h := range headers {
			t.AddField(h)
		}
		t.EndRow()
	}
	return t
}

// AddField adds a cell to the current row.
func (t *table) AddField(s string) { t.add(cell{text: s}) }

// AddColored adds a cell that color paints on a terminal.
func (t *table) AddColored(s string, color func(string) string) {
	t.add(cell{text: s, color: color})
}

func (t *table) add(c cell) {
	if len(t.rows) == 0 {
		t.rows = append(t.rows, nil)
	}
	last := len(t.rows) - 1
	t.rows[last] = append(t.rows[last], c)
}

// EndRow starts a new row.
func (t *table) EndRow() { t.rows = append(t.rows, nil) }

// Render writes the table.
func (t *table) Render() error {
	var b strings.Builder
	if !t.tty {
		for r, row := range t.rows {
			for i, c := range row {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(c.text)
			}
			if r < len(t.rows)-1 { // an ended row; the last is still open
				b.WriteByte('\n')
			}
		}
		_, err := io.WriteString(t.out, b.String())
		return err
	}
	widths := t.columnWidths()
	for _, row := range t.rows {
		for i, c := range row {
			if i > 0 {
				b.WriteString(columnGap)
			}
			s := truncateWidth(c.text, widths[i])
			if i < len(widths)-1 {
				s += strings.Repeat(" ", max(widths[i]-displayWidth(s), 0))
			}
			if c.color != nil {
				s = c.color(s)
			}
			b.WriteString(s)
		}
		if len(row) > 0 {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(t.out, b.String())
	return err
}

const columnGap = "  "

// columnWidths shares the terminal's width out as gh does: columns
// narrower than an equal share keep their width, the others split what is
// left, and any width still free goes to the columns that were cut, left
// to right.
func (t *table) columnWidths() []int {
	n := 0
	for _, row := range t.rows {
		n = max(n, len(row))
	}
	want := make([]int, n)
	for _, row := range t.rows {
		for i, c := range row {
			want[i] = max(want[i], displayWidth(c.text))
		}
	}
	widths := make([]int, n)
	avail := func() int {
		a := t.width - len(columnGap)*(n-1)
		for _, w := range widths {
			a -= w
		}
		return a
	}
	unset := func() int {
		u := 0
		for _, w := range widths {
			if w == 0 {
				u++
			}
		}
		return u
	}
	if a, u := avail(), unset(); a > 0 && u > 0 {
		for i := range widths {
			if want[i] < a/u {
				widths[i] = want[i]
			}
		}
	}
	if u := unset(); u > 0 {
		share := avail() / u
		for i := range widths {
			if widths[i] == 0 {
				if want[i] < share {
					widths[i] = want[i]
				} else if share > 0 {
					widths[i] = share
				}
			}
		}
	}
	for i, a := 0, avail(); i < n && a > 0; i++ {
		add := min(want[i]-widths[i], a)
		widths[i] += add
		a -= add
	}
	return widths
}

// truncateWidth cuts s to width columns, ending it with "..." when there is
// room for it (gh's rule: width 5 or more).
func truncateWidth(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	tail := ""
	if width >= 5 {
		tail = "..."
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := runeWidth(r)
		if used+w > width-len(tail) {
			break
		}
		b.WriteRune(r)
		used += w
	}
	b.WriteString(tail)
	if used+len(tail) < width {
		b.WriteByte(' ') // a wide character did not fit: keep the column's width
	}
	return b.String()
}

func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is the number of terminal columns r takes: 0 for control and
// combining characters, 2 for East Asian wide and fullwidth characters and
// emoji, else 1. It covers the ranges a subject or name holds in practice,
// not every corner of Unicode's width tables.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f || r == utf8.RuneError:
		return 0
	case r < 0x300:
		return 1
	case r >= 0x300 && r <= 0x36f, r >= 0x200b && r <= 0x200f, r >= 0xfe00 && r <= 0xfe0f:
		return 0 // combining marks, zero-width spaces and joiners, variation selectors
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
