package delegate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/gitcodex/git-codex/tools"
)

// An agent CLI's output line can be as large as what its tools read: a
// tool result holding a 200 MB file is one 200 MB JSON line. Read whole,
// such a line cost about seven times its size in memory (the growing
// buffer, its trimmed copy, the transcript's copy, the decoded strings:
// 1.97 GB of RSS for 200 MB, docs/PERFORMANCE.md), and the transcript
// kept every byte. So lines are read with a cap: a line over it is
// shortened as it streams by, never held whole; its long JSON strings
// are cut (each keeps its first bytes and says how many it lost), which
// leaves a small line that still parses as the event it was, so a turn's
// result, session id, cost and usage survive a huge tool result or a
// huge answer. Only a line that is still over the cap with its strings
// cut (millions of numbers, say) is skipped to its newline unread.

// Default caps (config delegate.max_line_bytes, delegate.max_transcript_bytes).
const (
	defaultMaxLineBytes       = 4 << 20
	defaultMaxTranscriptBytes = 64 << 20
	// minLineBytes is the least a line cap can be: a cap below it is
	// raised to it, so that a CLI's ordinary lines are never cut.
	minLineBytes = 64 << 10
	// skeletonKeep is what the second reading of an over-cap line keeps
	// of each string: enough for ids, types and the start of a text.
	skeletonKeep = 256
	// lineHeadBytes is how much of a skipped line is kept to say what it
	// was.
	lineHeadBytes = 200
)

// delegateKeys are the settings of delegated turns.
func delegateKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "delegate.max_line_bytes", Kind: "int", Default: defaultMaxLineBytes,
			Doc: "largest output line of a delegated agent CLI read whole, in bytes (at least 65536); a longer line (a tool result holding a big file) has its long strings cut to fit, and the result's output_cut says so"},
		{Name: "delegate.max_transcript_bytes", Kind: "int", Default: defaultMaxTranscriptBytes,
			Doc: "bytes of a delegated turn's output lines kept in its transcript (<git-common-dir>/codex/delegations/<id>.jsonl); lines past it are counted in the result's output_cut, not written"},
	}
}

// OutputCut says what git codex did not keep of an agent CLI's output in
// one turn, and the caps that decided it (their config keys raise them).
type OutputCut struct {
	// LinesShortened are lines over max_line_bytes read with their long
	// strings cut (each ends "[... N bytes cut by git codex]").
	LinesShortened int `json:"lines_shortened,omitempty"`
	// LinesSkipped are lines still over max_line_bytes with their
	// strings cut: not read at all.
	LinesSkipped int `json:"lines_skipped,omitempty"`
	// BytesDropped is how much of the CLI's output those lines lost.
	BytesDropped int64 `json:"bytes_dropped,omitempty"`
	// TranscriptLines and TranscriptBytes are lines read (whole or cut)
	// but not written to the transcript: the turn had written
	// max_transcript_bytes.
	TranscriptLines int   `json:"transcript_lines_unwritten,omitempty"`
	TranscriptBytes int64 `json:"transcript_bytes_unwritten,omitempty"`
	MaxLineBytes    int   `json:"max_line_bytes"`
	MaxTranscript   int64 `json:"max_transcript_bytes"`
}

// any reports whether anything was cut.
func (c OutputCut) any() bool {
	return c.LinesShortened+c.LinesSkipped+c.TranscriptLines > 0
}

// Summary is the cut in a sentence, for a person.
func (c OutputCut) Summary() string {
	var parts []string
	if c.LinesShortened > 0 {
		parts = append(parts, strconv.Itoa(c.LinesShortened)+" output line(s) over delegate.max_line_bytes ("+strconv.Itoa(c.MaxLineBytes)+") had their long strings cut")
	}
	if c.LinesSkipped > 0 {
		parts = append(parts, strconv.Itoa(c.LinesSkipped)+" line(s) still over it were skipped unread")
	}
	if c.BytesDropped > 0 {
		parts = append(parts, strconv.FormatInt(c.BytesDropped, 10)+" byte(s) dropped")
	}
	if c.TranscriptLines > 0 {
		parts = append(parts, strconv.Itoa(c.TranscriptLines)+" line(s) ("+strconv.FormatInt(c.TranscriptBytes, 10)+" bytes) not written to the transcript past delegate.max_transcript_bytes ("+strconv.FormatInt(c.MaxTranscript, 10)+")")
	}
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s
}

// outputLine is one line of an agent CLI's output as lineReader read it.
type outputLine struct {
	// data is the line without surrounding white space (or its
	// shortened form); nil when the line was skipped or empty.
	data      []byte
	size      int64 // bytes the CLI wrote, its newline not counted
	shortened bool
	skipped   bool
	head      []byte // the first bytes of a skipped line
}

// lineReader reads an agent CLI's output lines, none held whole past
// max bytes.
type lineReader struct {
	br  *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max < minLineBytes {
		max = minLineBytes
	}
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next reads one line; err is the reader's at the line's end (io.EOF
// after the last line).
func (r *lineReader) next() (outputLine, error) {
	var l outputLine
	var raw []byte
	var full, skeleton *stringCutter
	var err error
	for {
		chunk, e := r.br.ReadSlice('\n')
		l.size += int64(len(chunk))
		if full == nil && len(raw)+len(chunk) <= r.max {
			raw = append(raw, chunk...)
		} else {
			if full == nil {
				// over the cap: from here the line streams through two
				// cutters (strings kept up to a quarter of the cap, and
				// to skeletonKeep) and is never held whole
				full = &stringCutter{keep: r.max / 4, max: r.max}
				skeleton = &stringCutter{keep: skeletonKeep, max: r.max}
				full.write(raw)
				skeleton.write(raw)
				l.head = append([]byte(nil), raw[:min(len(raw), lineHeadBytes)]...)
				raw = nil
			}
			if len(l.head) < lineHeadBytes {
				l.head = append(l.head, chunk[:min(len(chunk), lineHeadBytes-len(l.head))]...)
			}
			if !skeleton.over {
				// (the skeleton's output is the smaller: once it is over,
				// so is the other, and the rest is only skipped)
				full.write(chunk)
				skeleton.write(chunk)
			}
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			continue
		}
		err = e
		break
	}
	if err == nil {
		l.size-- // the newline
	}
	switch {
	case full == nil:
		l.data = bytes.TrimSpace(raw)
	case !full.over:
		l.data, l.shortened = bytes.TrimSpace(full.out), true
	case !skeleton.over:
		l.data, l.shortened = bytes.TrimSpace(skeleton.out), true
	default:
		l.skipped = true
	}
	if len(l.data) == 0 {
		l.data = nil
	}
	return l, err
}

// stringCutter copies a JSON text, cutting each string literal after
// keep bytes of its content: the string then ends with a note of how
// many bytes it lost, and the text stays valid JSON (a cut never splits
// an escape sequence or a UTF-8 character). Past max bytes of output it
// stops copying and says so (over). A text that is not JSON comes out
// mangled, and still fails to parse.
type stringCutter struct {
	keep, max int
	out       []byte
	over      bool

	inString bool
	escape   bool  // the previous byte was a backslash
	hex      int   // hex digits of a \u escape still to come
	n        int   // bytes of the current string's content seen
	cut      int64 // bytes of the current string cut so far
}

func (s *stringCutter) write(p []byte) {
	for i := 0; i < len(p) && !s.over; i++ {
		if s.inString && s.cut > 0 && !s.escape && s.hex == 0 {
			// cutting: skip to the string's next quote or backslash
			j := nextQuoteOrBackslash(p[i:])
			s.cut += int64(j)
			s.n += j
			if i += j; i == len(p) {
				return
			}
		}
		b := p[i]
		if !s.inString {
			if b == '"' {
				s.inString, s.n, s.cut = true, 0, 0
			}
			s.emit(b)
			continue
		}
		cutting := s.cut > 0
		if !cutting && s.n >= s.keep && !s.escape && s.hex == 0 && b != '"' && !(b >= 0x80 && b < 0xC0) {
			// the first byte cut: at a character's start, outside an escape
			cutting = true
		}
		switch {
		case s.hex > 0:
			s.hex--
		case s.escape:
			s.escape = false
			if b == 'u' {
				s.hex = 4
			}
		case b == '\\':
			s.escape = true
		case b == '"':
			s.inString = false
			if s.cut > 0 {
				for _, c := range []byte("[... " + strconv.FormatInt(s.cut, 10) + " bytes cut by git codex]") {
					s.emit(c)
				}
			}
			s.emit(b)
			continue
		}
		s.n++
		if cutting {
			s.cut++
			continue
		}
		s.emit(b)
	}
}

// nextQuoteOrBackslash is the index of p's first '"' or '\\', or len(p).
func nextQuoteOrBackslash(p []byte) int {
	end := len(p)
	if q := bytes.IndexByte(p, '"'); q >= 0 {
		end = q
	}
	if b := bytes.IndexByte(p[:end], '\\'); b >= 0 {
		end = b
	}
	return end
}

func (s *stringCutter) emit(b byte) {
	if s.over {
		return
	}
	if len(s.out) >= s.max {
		s.over, s.out = true, nil
		return
	}
	s.out = append(s.out, b)
}
