package gitstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// checkFormat refuses a repository whose objects or refs this build cannot
// write in git's own format. go-git v5 hashes with SHA-1 unless built with
// `-tags sha256`, so one binary cannot serve both: writing into a
// `git init --object-format=sha256` repository made SHA-1 objects that git
// reports as corrupt and that stop `git gc` (issue 16 item 10). Nor can it
// read or move refs kept in a reftable. It reads only the repository's
// config, so Open stays cheap, and it runs before anything is written.
func checkFormat(commonDir string) error {
	b, err := os.ReadFile(filepath.Join(commonDir, "config"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitstate: read %s/config: %w", commonDir, err)
	}
	cfg, err := gitrepo.ParseConfig(b)
	if err != nil {
		return fmt.Errorf("gitstate: parse %s/config: %w", commonDir, err)
	}
	option := func(key string) string {
		v, _ := ConfigValue(cfg, "extensions", "", key)
		return strings.ToLower(v)
	}
	if of := option("objectformat"); of != "" && of != "sha1" {
		return fmt.Errorf("gitstate: %s uses %s object names (extensions.objectFormat), and this build of git codex writes only SHA-1 objects: %w", commonDir, of, ErrUnsupportedRepository)
	}
	if rs := option("refstorage"); rs != "" && rs != "files" {
		return fmt.Errorf("gitstate: %s keeps its refs in a %s (extensions.refStorage), and git codex reads and moves only loose and packed refs: %w", commonDir, rs, ErrUnsupportedRepository)
	}
	return nil
}
