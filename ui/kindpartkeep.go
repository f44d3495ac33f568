package ui

import (
	"encoding/binary"
	"errors"
	"path"
	"sort"
	"strings"
)

// A kindPart as the kept file holds it (gitstate.KeepParts): a server
// that starts decodes ~22k of them (a month's mail), so they are bytes,
// not JSON:
//
//	uvarint count, uvarint len(newest), each path (uvarint length, bytes),
//	uvarint len(mail), each recipient's (name, total, unread) in name order,
//	one byte of flags (1: isMail, 2: mailUnread), mailTo, kindPartVersion
//
// A newest record's name is its path's base without .json, as Leaf makes
// it, so it is not written. The file's checksum, not this, says the bytes
// are those written.

var errKindPart = errors.New("not a kept kind part")

// kindPartVersion ends a part made by this version's Leaf (kindReduction):
// records counted by name. A part kept by an earlier version (which
// counted what was JSON, whatever its name) ends with its mailTo and is
// refused, so it is made afresh, not mixed with these; the kept files
// keep their names, each rewritten as its parts are made again.
const kindPartVersion = 2

func encodeKindPart(v any) ([]byte, error) {
	p, ok := v.(kindPart)
	if !ok {
		return nil, errKindPart
	}
	size := 17 + len(p.mailTo) + 16*len(p.mail) // a past state's first ?at= encodes ~35k
	for _, r := range p.newest {
		size += len(r.path) + 2
	}
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(p.count))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(p.newest)))
	for _, r := range p.newest {
		str(r.path)
	}
	tos := make([]string, 0, len(p.mail))
	for to := range p.mail {
		tos = append(tos, to)
	}
	sort.Strings(tos)
	b = binary.AppendUvarint(b, uint64(len(tos)))
	for _, to := range tos {
		str(to)
		b = binary.AppendUvarint(b, uint64(p.mail[to].Total))
		b = binary.AppendUvarint(b, uint64(p.mail[to].Unread))
	}
	var flags byte
	if p.isMail {
		flags |= 1
	}
	if p.mailUnread {
		flags |= 2
	}
	b = append(b, flags)
	str(p.mailTo)
	b = append(b, kindPartVersion)
	return b, nil
}

func decodeKindPart(data []byte) (any, error) {
	// one string for the whole part: the paths and names are slices of it
	d := partReader{s: string(data)}
	var p kindPart
	p.count = d.int()
	if n := d.int(); n > 0 && d.err == nil {
		p.newest = make([]recordAt, 0, min(n, len(d.s)))
		for i := 0; i < n && d.err == nil; i++ {
			r := d.str()
			if path.Ext(r) != ".json" {
				d.err = errKindPart
			}
			p.newest = append(p.newest, recordAt{name: strings.TrimSuffix(path.Base(r), ".json"), path: r})
		}
	}
	if n := d.int(); n > 0 && d.err == nil {
		p.mail = make(map[string]mailCount, min(n, len(d.s)))
		for i := 0; i < n && d.err == nil; i++ {
			to := d.str()
			p.mail[to] = mailCount{Total: d.int(), Unread: d.int()}
		}
	}
	flags := d.str1()
	p.isMail, p.mailUnread = flags&1 != 0, flags&2 != 0
	p.mailTo = d.str()
	if v := d.str1(); d.err != nil || v != kindPartVersion || d.s != "" {
		return nil, errKindPart
	}
	return p, nil
}

// partReader reads a kept part's fields; past its end it sets err and
// reads zeros.
type partReader struct {
	s   string
	err error
}

func (d *partReader) int() int {
	if d.err != nil {
		return 0
	}
	v, n := uvarintString(d.s)
	if n <= 0 || v > 1<<40 {
		d.err = errKindPart
		return 0
	}
	d.s = d.s[n:]
	return int(v)
}

func (d *partReader) str() string {
	n := d.int()
	if d.err != nil || n > len(d.s) {
		d.err = errKindPart
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

func (d *partReader) str1() byte {
	if d.err != nil || d.s == "" {
		d.err = errKindPart
		return 0
	}
	c := d.s[0]
	d.s = d.s[1:]
	return c
}

// uvarintString is binary.Uvarint on a string's bytes (no copy).
func uvarintString(s string) (uint64, int) {
	var v uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return v | uint64(c)<<(7*i), i + 1
		}
		v |= uint64(c&0x7f) << (7 * i)
	}
	return 0, 0
}
