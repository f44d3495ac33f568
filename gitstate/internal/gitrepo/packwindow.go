package gitrepo

import "io"

// packWindow is the stretch of a pack file read last, kept for the reads
// that follow: one per Objects, shared by its packs. An object read from
// a pack used to read its own 4 KiB with a system call and a buffer of
// its own, and a walk of the history reads commits that git's repack laid
// out one after the other, a few hundred bytes each: status' walk of its
// newest thousand calls spent a sixth of its time in those reads (issue
// 27, docs/PERFORMANCE.md "Views on a long history"). Through the window,
// the objects that follow one another in a pack are read with one system
// call for every packWindowSize bytes. Pack files never change once
// written (a pack's name is its content's hash), so what the window holds
// stays true as long as the pack is open.
type packWindow struct {
	p   *packFile // the pack whose bytes buf holds; nil: none
	off int64     // where in the pack buf begins
	buf []byte    // the bytes read, at most packWindowSize
	n   int       // reads of a pack made (for tests)
}

// packWindowSize is read at a time: tens of commits or trees of a
// repacked history, and one page-cache read's worth of system call.
const packWindowSize = 32 << 10

// packReadSize is read where a read does not go on from the window.
const packReadSize = 4 << 10

// drop forgets p's bytes (p is being closed).
func (w *packWindow) drop(p *packFile) {
	if w.p == p {
		w.p, w.buf = nil, w.buf[:0]
	}
}

// packReader reads a pack from pos on, through the Objects' window: an
// io.ByteReader, so that zlib inflates from it without a buffer of its
// own. A delta's base is read (through the same window) between two reads
// of the delta's own bytes; every read checks that the window still
// holds pos, and reads it again if not.
type packReader struct {
	w   *packWindow
	p   *packFile
	pos int64
}

// fill makes the window hold pos.
func (r *packReader) fill() error {
	w := r.w
	if w.p == r.p && r.pos >= w.off && r.pos < w.off+int64(len(w.buf)) {
		return nil
	}
	// a read that goes on where the window ends (the next commits of a
	// walk) reads a whole window; one elsewhere (a record's blob, a tree)
	// reads packReadSize, as a read did before the window: copying a
	// window for every object of a scattered walk costs more than the
	// system calls it saves
	size := packReadSize
	if end := w.off + int64(len(w.buf)); w.p == r.p && r.pos >= end && r.pos < end+packReadSize {
		size = packWindowSize
	}
	if cap(w.buf) < packWindowSize {
		w.buf = make([]byte, packWindowSize)
	}
	w.p, w.buf = nil, w.buf[:size]
	w.n++
	n, err := r.p.f.ReadAt(w.buf, r.pos)
	if n == 0 {
		w.buf = w.buf[:0]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // an object past the pack's end
		}
		return err
	}
	w.p, w.off, w.buf = r.p, r.pos, w.buf[:n]
	return nil
}

func (r *packReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if err := r.fill(); err != nil {
		return 0, err
	}
	n := copy(b, r.w.buf[r.pos-r.w.off:])
	r.pos += int64(n)
	return n, nil
}

func (r *packReader) ReadByte() (byte, error) {
	if err := r.fill(); err != nil {
		return 0, err
	}
	c := r.w.buf[r.pos-r.w.off]
	r.pos++
	return c, nil
}
