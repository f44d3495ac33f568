package github

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCacheBounds: the cache keeps at most its entries and bytes,
// dropping the least recently used first, and never keeps an answer
// larger than one entry may be.
func TestCacheBounds(t *testing.T) {
	c := newCache(3, 100, 40)
	put := func(key string, n int) {
		c.put(cachedAnswer{key: key, etag: `"` + key + `"`, header: http.Header{}, body: []byte(strings.Repeat("x", n))})
	}
	has := func(keys ...string) string {
		var out []string
		for _, k := range keys {
			if _, ok := c.get(k); ok {
				out = append(out, k)
			}
		}
		return fmt.Sprint(out)
	}
	put("a", 10)
	put("b", 10)
	put("c", 10)
	c.get("a") // a is used: b is now the oldest
	put("d", 10)
	if got := has("a", "b", "c", "d"); got != "[a c d]" || c.Len() != 3 || c.bytes != 30 {
		t.Fatalf("past 3 entries: %s, %d entries, %d bytes", got, c.Len(), c.bytes)
	}
	put("e", 41) // too large: not kept
	if got := has("e"); got != "[]" || c.Len() != 3 {
		t.Fatalf("a large answer: %s, %d entries", got, c.Len())
	}
	put("a", 40)
	put("c", 40) // 40+40+10 = 90; d is the oldest
	put("f", 20) // 110 bytes and 4 entries: d, the oldest, goes
	if c.bytes != 100 || c.Len() != 3 {
		t.Fatalf("bounds: %d entries, %d bytes", c.Len(), c.bytes)
	}
	if got := has("a", "c", "d", "f"); got != "[a c f]" {
		t.Fatalf("past 100 bytes: %s (%d bytes)", got, c.bytes)
	}
	put("c", 41) // a larger answer for a kept key: the old one goes too
	if got := has("c"); got != "[]" || c.bytes != 60 {
		t.Fatalf("a key's answer grown too large: %s, %d bytes", got, c.bytes)
	}

	// the bytes alone: three of 40 are 120, past 100; the oldest goes
	c = newCache(10, 100, 40)
	put("x", 40)
	put("y", 40)
	put("z", 40)
	if got := has("x", "y", "z"); got != "[y z]" || c.bytes != 80 {
		t.Fatalf("past 100 bytes: %s, %d bytes", got, c.bytes)
	}
}
