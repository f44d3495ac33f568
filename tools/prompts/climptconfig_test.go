package prompts

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const iteratorRegistry = `{"tools":{"commands":[
 {"c1":"dev","c2":"start","c3":"project","description":"start the project"},
 {"c1":"dev","c2":"stop","c3":"project","description":"stop the project"},
 {"c1":"ops","c2":"run","c3":"job","description":"run a job"}
]}}`

// TestConfigPrefix (issue 25 item 12): seed 004's configParam. For agent
// iterator, domain dev, Climpt's configuration is iterator-dev:
// .agent/climpt/config/iterator-dev-app.yml says where the templates are,
// iterator-dev-user.yml which actions and targets run. A domain without
// files keeps the fixed layout, and its prefix is still reported.
func TestConfigPrefix(t *testing.T) {
	dir := tree(t, "", map[string]string{
		".agent/iterator/registry.json":                        iteratorRegistry,
		".agent/climpt/config/iterator-dev-app.yml":            "working_dir: \".agent/iterator\"\napp_prompt:\n  base_dir: \"steps/dev\"\n",
		".agent/climpt/config/iterator-dev-user.yml":           "params:\n  two:\n    directiveType:\n      pattern: \"^(start)$\"\n    layerType:\n      pattern: \"^(project|issue)$\"\n",
		".agent/iterator/steps/dev/start/project/f_default.md": "---\ntitle: start\noptions:\n  stdin: true\n---\nstart {input_text}",
		".agent/iterator/steps/dev/stop/project/f_default.md":  "stop it",
		".agent/iterator/prompts/ops/run/job/f_default.md":     "run it",
		// the fixed layout's folder for dev is not Climpt's: not used
		".agent/iterator/prompts/dev/start/project/f_default.md": "the wrong one",
	})
	cat := Load(dir, "iterator")
	start, ok := cat.Lookup("dev", "start", "project")
	if !ok {
		t.Fatalf("dev start project not found: %v %v", keys(cat), cat.Problems)
	}
	if start.Config() != "iterator-dev" || !slices.Equal(start.ConfigFiles(), []string{".agent/climpt/config/iterator-dev-app.yml", ".agent/climpt/config/iterator-dev-user.yml"}) {
		t.Errorf("config %q, files %v", start.Config(), start.ConfigFiles())
	}
	r, err := cat.Execute(start, map[string]string{"input_text": "now"}, nil)
	if err != nil || r.Prompt != "start now" || r.Template != ".agent/iterator/steps/dev/start/project/f_default.md" {
		t.Errorf("execute: %+v, %v; want the template the config names", r, err)
	}
	if !hasProblem(cat, ".agent/iterator/prompts/dev/start/project", "not used: config iterator-dev names .agent/iterator/steps/dev for dev") {
		t.Errorf("the shadowed folder is not reported: %v", cat.Problems)
	}

	// the user file's pattern refuses an action it does not name
	stop, _ := cat.Lookup("dev", "stop", "project")
	_, err = cat.Execute(stop, nil, nil)
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Path != ".agent/climpt/config/iterator-dev-user.yml" || !strings.Contains(ee.Cause, `action "stop" does not match params.two.directiveType.pattern "^(start)$" of config iterator-dev`) {
		t.Errorf("stop: %v, want the user file's refusal", err)
	}

	// a domain with no files: the fixed layout, its prefix still iterator-ops
	run, _ := cat.Lookup("ops", "run", "job")
	if run.Config() != "iterator-ops" || len(run.ConfigFiles()) != 0 {
		t.Errorf("ops: config %q, files %v", run.Config(), run.ConfigFiles())
	}
	if r, err := cat.Execute(run, nil, nil); err != nil || r.Prompt != "run it" {
		t.Errorf("ops run job: %+v %v", r, err)
	}

	// the default agent's prefix is c1 itself
	if got := ConfigName(DefaultAgent, "git"); got != "git" {
		t.Errorf("ConfigName(climpt, git) = %q", got)
	}
	if got := ConfigName("iterator", "dev"); got != "iterator-dev" {
		t.Errorf("ConfigName(iterator, dev) = %q", got)
	}
}

// TestConfigPrefixDefaultAgent: for climpt, git-app.yml is git's, and a
// key the prefixed file leaves out is the fixed layout's (working_dir
// .agent/climpt); the unprefixed app.yml is never read for a domain.
func TestConfigPrefixDefaultAgent(t *testing.T) {
	dir := tree(t, "", map[string]string{
		".agent/climpt/registry.json":                                   `{"tools":{"commands":[{"c1":"git","c2":"merge-up","c3":"base-branch","description":"merge up"}]}}`,
		".agent/climpt/config/git-app.yml":                              "app_prompt:\n  base_dir: \"templates/git\"\n",
		".agent/climpt/config/app.yml":                                  "working_dir: \"elsewhere\"\napp_prompt:\n  base_dir: \"nowhere\"\n",
		".agent/climpt/templates/git/merge-up/base-branch/f_default.md": "merge it",
	})
	cat := Load(dir, DefaultAgent)
	cmd, ok := cat.Lookup("git", "merge-up", "base-branch")
	if !ok || cmd.Config() != "git" {
		t.Fatalf("git merge-up base-branch: %v, %v", ok, keys(cat))
	}
	r, err := cat.Execute(cmd, nil, nil)
	if err != nil || r.Prompt != "merge it" || r.Template != ".agent/climpt/templates/git/merge-up/base-branch/f_default.md" {
		t.Errorf("execute: %+v %v", r, err)
	}
}

// TestConfigPrefixEscapes: a configuration naming a folder outside the
// working tree is a problem, and the fixed layout is used.
func TestConfigPrefixEscapes(t *testing.T) {
	dir := tree(t, "", map[string]string{
		".agent/iterator/registry.json":                    iteratorRegistry,
		".agent/climpt/config/iterator-ops-app.yml":        "working_dir: \"..\"\napp_prompt:\n  base_dir: \"../etc\"\n",
		".agent/iterator/prompts/ops/run/job/f_default.md": "run it",
	})
	cat := Load(dir, "iterator")
	run, _ := cat.Lookup("ops", "run", "job")
	if r, err := cat.Execute(run, nil, nil); err != nil || r.Prompt != "run it" {
		t.Errorf("ops run job: %+v %v", r, err)
	}
	if !hasProblem(cat, ".agent/climpt/config/iterator-ops-app.yml", "leads outside the working tree") {
		t.Errorf("problems: %v", cat.Problems)
	}
}

func hasProblem(cat *Catalog, path, cause string) bool {
	for _, p := range cat.Problems {
		if p.Path == path && strings.Contains(p.Cause, cause) {
			return true
		}
	}
	return false
}
