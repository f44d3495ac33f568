package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfigAgreesWithGit parses config files with ParseConfig and
// with `git config --file F --list -z`: the same variables and values in
// the same order, and an error exactly where git reports one.
func TestParseConfigAgreesWithGit(t *testing.T) {
	files := []string{
		"",
		"[user]\n\temail = a@b.c\n\tname = A B\n",
		"[User]\n\tEMAIL = first@x\n[user]\n\temail = second@x\n",
		"[core]\n\tBare\n\tx = \"a b\"  c\t d # hi\n",
		"[sec \"Sub \\\"q\\\" \\\\ x\"]\n k = v\\\n w\n",
		"[a.B]\nz=1\n[s] k = same line\n",
		"k = before any section\n[s]\nk=1\n",
		"; comment\n# comment\n   [s]   \n  k=v;c\n  j = \"v;#\" ; c\n",
		"[s]\n k = \"unterminated\n",
		"[s]\n k # comment after a bare key\n",
		"[s\n k = v\n",
		"[s \"x\" ]\n k = v\n",
		"[s \"x\"]\n k = a\\tb\\nc\\bd\\\\e\\\"f\n",
		"[s]\n k = bad \\q escape\n",
		"[s]\r\n k = crlf\r\n j = v \r\n",
		"\xef\xbb\xbf[s]\n k = bom\n",
		"[s]\n k =\n j\n l = \"\"\n",
		"[s]\n 9k = digit first\n",
		"[s]\n k-1 = dash\n k_1 = underscore\n",
		"[include]\n\tpath = other\n[includeIf \"gitdir:~/w/\"]\n\tpath = w\n",
		"[extensions]\n\tobjectFormat = sha256\n\tworktreeConfig\n",
		"[s]\n k = trailing backslash \\",
		"[s]\n k = \"quoted\" tail  \n",
		"[]\n k = v\n",
		"[s.]\n k = v\n",
		"[s \"\"]\n k = empty subsection\n",
		"[s \"a\\x\"]\n k = backslash drops\n",
		"[s]\n\tk\t=\tv\t\n",
		"[s]\n k = ünïcödé ✓\n",
	}
	dir := t.TempDir()
	for i, content := range files {
		path := filepath.Join(dir, "config")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out, gitErr := exec.Command("git", "config", "--file", path, "--list", "-z").Output()
		entries, err := ParseConfig([]byte(content))
		if (err != nil) != (gitErr != nil) {
			t.Errorf("file %d %q: ParseConfig error %v, git error %v", i, content, err, gitErr)
			continue
		}
		if err != nil {
			continue
		}
		var want []string
		for _, rec := range strings.Split(string(out), "\x00") {
			if rec != "" {
				want = append(want, rec)
			}
		}
		var got []string
		for _, e := range entries {
			if e.Bare {
				got = append(got, e.Name())
			} else {
				got = append(got, e.Name()+"\n"+e.Value)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("file %d %q:\n got  %q\n git  %q", i, content, got, want)
		}
	}
}

func TestConfigValueLastWins(t *testing.T) {
	entries, err := ParseConfig([]byte("[user]\n email = a\n[USER]\n Email = b\n[user \"x\"]\n email = c\n[s]\n flag\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := ConfigValue(entries, "user", "", "email"); !ok || v != "b" {
		t.Errorf("user.email = %q, %v; want b", v, ok)
	}
	if v, ok := ConfigValue(entries, "user", "x", "email"); !ok || v != "c" {
		t.Errorf("user.x.email = %q, %v; want c", v, ok)
	}
	if v, ok := ConfigValue(entries, "s", "", "flag"); !ok || v != "true" {
		t.Errorf("s.flag = %q, %v; want true", v, ok)
	}
	if _, ok := ConfigValue(entries, "user", "", "name"); ok {
		t.Error("user.name found, want not set")
	}
}
