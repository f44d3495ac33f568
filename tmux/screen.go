package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Screen is a pane's visible rows read at one moment, with where its
// cursor is and how many rows have scrolled off into its history: enough
// to tell what changed on it since an earlier Screen, and where (rows
// scrolled away since then are History minus the earlier History).
type Screen struct {
	// Rows are the visible rows, top to bottom, trailing blanks trimmed
	// from each row but every row kept.
	Rows []string
	// CursorX and CursorY are the cursor's column and row (0-based).
	CursorX, CursorY int
	// History is the number of rows in the pane's scrollback.
	History int
}

// Text is the screen as Capture returns it.
func (s Screen) Text() string {
	t := strings.TrimRight(strings.Join(s.Rows, "\n"), "\n")
	if t == "" {
		return ""
	}
	return t + "\n"
}

// CursorRow is the row the cursor is on, and the row above it ("" on the
// first row).
func (s Screen) CursorRow() (above, line string) {
	if s.CursorY < 0 || s.CursorY >= len(s.Rows) {
		return "", ""
	}
	if s.CursorY > 0 {
		above = s.Rows[s.CursorY-1]
	}
	return above, s.Rows[s.CursorY]
}

// errScreenMoving is ReadScreen's answer for a pane whose rows scrolled
// while they were read.
var errScreenMoving = errors.New("the pane scrolled while it was read")

// ReadScreen reads the session's active pane: its rows, cursor and
// history size, in one tmux command, checked to be one moment's (the
// cursor and history are read before and after the rows, and the read is
// repeated, a few times at most, while they differ: a pane being printed
// to scrolls between commands).
func (r Runner) ReadScreen(ctx context.Context, name string) (Screen, error) {
	const op = "capture-pane"
	if err := CheckName(name); err != nil {
		return Screen{}, opError(op, name, err)
	}
	const mark = "#{history_size} #{cursor_x} #{cursor_y}"
	var err error
	for try := 0; try < 5; try++ {
		var out string
		out, err = r.run(ctx, op, name, true,
			"display-message", "-p", "-t", paneTarget(name), mark, ";",
			op, "-p", "-t", paneTarget(name), ";",
			"display-message", "-p", "-t", paneTarget(name), mark)
		if err != nil {
			return Screen{}, err
		}
		var s Screen
		s, err = parseScreen(out)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errScreenMoving) {
			return Screen{}, opError(op, name, err)
		}
	}
	return Screen{}, opError(op, name, err)
}

// parseScreen reads ReadScreen's output: a mark line, the rows, the same
// mark line again.
func parseScreen(out string) (Screen, error) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 {
		return Screen{}, fmt.Errorf("unexpected capture %q", out)
	}
	first, last := lines[0], lines[len(lines)-1]
	if first != last {
		return Screen{}, errScreenMoving
	}
	f := strings.Fields(first)
	if len(f) != 3 {
		return Screen{}, fmt.Errorf("unexpected pane mark %q", first)
	}
	var n [3]int
	for i := range f {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			return Screen{}, fmt.Errorf("pane mark %q: %w", first, err)
		}
		n[i] = v
	}
	rows := lines[1 : len(lines)-1]
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return Screen{Rows: rows, History: n[0], CursorX: n[1], CursorY: n[2]}, nil
}
