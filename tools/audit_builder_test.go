package tools

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneAuditBuilder: every commit written for a caller gets its message
// from auditRecord, so every entry point says who called what, how the
// caller proved it and with which arguments in the same trailers (issue
// 26). No other code of the package builds a commit's meta or names an
// audit trailer: seal.go only redacts a meta built here.
func TestOneAuditBuilder(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	builds := regexp.MustCompile(`gitstate\.Meta\{|SetMeta\(|CommitAt\(|Key: *gitstate\.Trailer`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "audit.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !builds.MatchString(line) || strings.Contains(line, "auditRecord(") {
				continue
			}
			if f == "seal.go" && (strings.TrimSpace(line) == "tx.SetMeta(m)" || strings.Contains(line, "gitstate.TrailerRedacted")) {
				continue // the sealed copy of the meta auditRecord built, and what sealing took out
			}
			t.Errorf("%s:%d builds an audit record by hand; use auditRecord: %s", f, i+1, strings.TrimSpace(line))
		}
	}
}
