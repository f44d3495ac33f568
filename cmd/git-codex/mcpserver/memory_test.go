package mcpserver

import (
	"testing"
	"time"
)

// TestMemoryReturnedAtMostEveryInterval: the server gives freed memory
// back at most once per memoryReturnEvery, counted from its first call.
func TestMemoryReturnedAtMostEveryInterval(t *testing.T) {
	var m memoryReturner
	t0 := time.Now()
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{
		{0, false}, // the first call starts the count
		{time.Second, false},
		{memoryReturnEvery - time.Millisecond, false},
		{memoryReturnEvery, true},
		{memoryReturnEvery + time.Second, false},
		{2*memoryReturnEvery + time.Second, true},
	} {
		if got := m.after(t0.Add(c.at)); got != c.want {
			t.Errorf("a call answered at +%s: returned %v, want %v", c.at, got, c.want)
		}
	}
}
