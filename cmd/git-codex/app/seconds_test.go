package app

import "testing"

func TestSecondsFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "90", want: 90}, {in: "90s", want: 90}, {in: "2m", want: 120}, {in: "1h30m", want: 5400},
		{in: "0", want: 0}, {in: "soon", bad: true}, {in: "1500ms", bad: true},
	} {
		var s seconds
		err := s.Set(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("Set(%q) = %d, want an error", c.in, s.n)
			}
			continue
		}
		if err != nil || s.n != c.want {
			t.Errorf("Set(%q) = %d, %v; want %d", c.in, s.n, err, c.want)
		}
	}
	if !countsSeconds("seconds to connect before FAILED (default instance.start_timeout)") || !countsSeconds("free after this many seconds (default: until released)") {
		t.Error("the docs of start_timeout and ttl_seconds count seconds")
	}
	if countsSeconds("show at most N events (0: all)") {
		t.Error("--limit does not count seconds")
	}
}
