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
// 26). No other code of the framework or of the nouns (the packages below
// tools/) builds a commit's meta or names an audit trailer: seal.go only
// redacts a meta built here, and the nouns get theirs from the framework
// (Call.Audit, Call.AuditOf, Followup.Record).
func TestOneAuditBuilder(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	nouns, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, nouns...)
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
			if !builds.MatchString(line) || strings.Contains(line, "auditRecord(") || strings.Contains(line, ".AuditOf(") {
				continue
			}
			if f == "seal.go" && (strings.TrimSpace(line) == "tx.SetMeta(m)" || strings.Contains(line, "gitstate.TrailerRedacted")) {
				continue // the sealed copy of the meta auditRecord built, and what sealing took out
			}
			t.Errorf("%s:%d builds an audit record by hand; use auditRecord: %s", f, i+1, strings.TrimSpace(line))
		}
	}
}
