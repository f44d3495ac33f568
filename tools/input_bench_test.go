package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkCheckValues measures the entry checks (UTF-8, control
// characters, credential shapes) on a typical mail and on a 64 KiB body.
func BenchmarkCheckValues(b *testing.B) {
	for _, size := range []int{200, 64 << 10} {
		body := strings.Repeat("the quick brown fox jumps over the lazy dog; sk-short ghp_ ", size/50+1)[:size]
		args, _ := json.Marshal(map[string]any{"to": "boss", "subject": "Blocked on the auth refactor", "body": body})
		b.Run(map[int]string{200: "mail", 64 << 10: "64KiB"}[size], func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			for i := 0; i < b.N; i++ {
				if e := checkValues(args, map[string]bool{"body": true}, nil); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}
