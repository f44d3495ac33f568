package prompts

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Seed 004's execute names Climpt's configuration by a prefix: c1 for the
// default agent, ${agent}-${c1} for any other (ConfigName). Climpt reads
// .agent/climpt/config/<prefix>-app.yml, which says where the domain's
// templates are (working_dir, app_prompt.base_dir), and <prefix>-user.yml,
// which bounds the actions and targets it runs (params.two.directiveType
// and layerType patterns). git codex reads both for the commands
// registry.json lists:
//
//   - a key the prefixed file sets wins; a key it leaves out (or a file
//     that is absent) is the fixed layout's: working_dir .agent/<agent>,
//     app_prompt.base_dir prompts/<c1>, no patterns;
//   - Climpt's unprefixed app.yml and user.yml configure `climpt` run
//     without --config, which names no domain: they never apply to a
//     command, which always has one.

// ConfigDir is where Climpt keeps its configuration files, for every agent.
const ConfigDir = ".agent/climpt/config"

// ConfigName is Climpt's --config for agent's domain c1.
func ConfigName(agent, c1 string) string {
	if agent == DefaultAgent {
		return c1
	}
	return agent + "-" + c1
}

// climptConfig is what a prefix's files say about its commands.
type climptConfig struct {
	name                   string
	promptDir              string // the domain's templates, slash-separated, relative to the working tree
	appFile                string // the app file read ("" when absent)
	userFile               string
	directive              *regexp.Regexp // c2 must match (nil: any)
	layer                  *regexp.Regexp // c3 must match
	directiveSrc, layerSrc string
}

// appYAML and userYAML are the parts of Climpt's files git codex reads.
type appYAML struct {
	WorkingDir *string `yaml:"working_dir"`
	AppPrompt  struct {
		BaseDir *string `yaml:"base_dir"`
	} `yaml:"app_prompt"`
}

type userYAML struct {
	Params struct {
		Two struct {
			DirectiveType struct {
				Pattern string `yaml:"pattern"`
			} `yaml:"directiveType"`
			LayerType struct {
				Pattern string `yaml:"pattern"`
			} `yaml:"layerType"`
		} `yaml:"two"`
	} `yaml:"params"`
}

// maxConfigBytes bounds a Climpt configuration file.
const maxConfigBytes = 64 * 1024

// config reads the configuration of c1's prefix; a file that cannot be
// read or names a folder outside the working tree is a problem, and its
// keys are the defaults.
func (cat *Catalog) config(c1 string) climptConfig {
	if cfg, ok := cat.configs[c1]; ok {
		return cfg
	}
	name := ConfigName(cat.Agent, c1)
	cfg := climptConfig{name: name}
	workingDir, baseDir := ".agent/"+cat.Agent, "prompts/"+c1
	if cat.root != "" {
		rel := path.Join(ConfigDir, name+"-app.yml")
		var app appYAML
		if cat.readConfig(rel, &app) {
			cfg.appFile = rel
			if app.WorkingDir != nil {
				workingDir = *app.WorkingDir
			}
			if app.AppPrompt.BaseDir != nil {
				baseDir = *app.AppPrompt.BaseDir
			}
		}
		rel = path.Join(ConfigDir, name+"-user.yml")
		var user userYAML
		if cat.readConfig(rel, &user) {
			cfg.userFile = rel
			cfg.directiveSrc, cfg.directive = cat.pattern(rel, "directiveType", user.Params.Two.DirectiveType.Pattern)
			cfg.layerSrc, cfg.layer = cat.pattern(rel, "layerType", user.Params.Two.LayerType.Pattern)
		}
	}
	dir, err := insideTree(path.Join(workingDir, baseDir))
	if err != nil {
		cat.problem(cfg.appFile, 0, "working_dir %q, app_prompt.base_dir %q: %v; the default %s is used", workingDir, baseDir, err, path.Join(PromptsPath(cat.Agent), c1))
		dir = path.Join(PromptsPath(cat.Agent), c1)
	}
	cfg.promptDir = dir
	if cat.configs == nil {
		cat.configs = map[string]climptConfig{}
	}
	cat.configs[c1] = cfg
	return cfg
}

// readConfig decodes the YAML file rel into v; false when it is absent or
// unreadable (a problem).
func (cat *Catalog) readConfig(rel string, v any) bool {
	data, err := ReadFile(filepath.Join(cat.root, filepath.FromSlash(rel)), maxConfigBytes)
	if os.IsNotExist(err) {
		return false
	}
	if err == nil {
		err = yaml.Unmarshal(data, v)
	}
	if err != nil {
		cat.problem(rel, lineOf(err), "%v", err)
		return false
	}
	return true
}

// pattern compiles a user file's pattern ("" is none).
func (cat *Catalog) pattern(rel, key, src string) (string, *regexp.Regexp) {
	if src == "" {
		return "", nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		cat.problem(rel, 0, "params.two.%s.pattern %q: %v; it is not applied", key, src, err)
		return "", nil
	}
	return src, re
}

// insideTree checks a folder named by a configuration: relative, and
// never above the working tree.
func insideTree(p string) (string, error) {
	if p == "" || path.IsAbs(p) || filepath.IsAbs(p) || strings.Contains(p, "\\") {
		return "", fmt.Errorf("not a relative path")
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("leads outside the working tree")
	}
	return c, nil
}

// configured points a registry.json command at the templates its prefix's
// configuration names, when that is not the fixed layout, and returns its
// configuration.
func (cat *Catalog) configured(it registryItem) (climptConfig, *templateDir) {
	cfg := cat.config(it.C1)
	if cfg.promptDir == path.Join(PromptsPath(cat.Agent), it.C1) {
		return cfg, nil // the fixed layout: scanned already
	}
	dirRel := path.Join(cfg.promptDir, it.C2, it.C3)
	real, err := filepath.EvalSymlinks(filepath.Join(cat.root, filepath.FromSlash(cfg.promptDir)))
	if err != nil {
		return cfg, nil
	}
	if _, err := os.Stat(filepath.Join(cat.root, filepath.FromSlash(dirRel))); err != nil {
		return cfg, nil
	}
	names := cat.templateFiles(real, dirRel)
	if len(names) == 0 {
		return cfg, nil
	}
	td := &templateDir{c1: it.C1, c2: it.C2, c3: it.C3, dir: filepath.Join(cat.root, filepath.FromSlash(dirRel)), names: names, base: cfg.promptDir}
	data, err := ReadFile(filepath.Join(td.dir, primary(names)), MaxTemplateBytes)
	if err == nil {
		td.fm, err = readFrontMatter(data)
	}
	td.err = err
	return cfg, td
}

// checkConfig refuses a command its prefix's user file does not allow, as
// Climpt does.
func (c *Command) checkConfig() error {
	cfg := c.cfg
	if cfg.directive != nil && !cfg.directive.MatchString(c.C2) {
		return &ExecError{Path: cfg.userFile, Cause: fmt.Sprintf("action %q does not match params.two.directiveType.pattern %q of config %s", c.C2, cfg.directiveSrc, cfg.name)}
	}
	if cfg.layer != nil && !cfg.layer.MatchString(c.C3) {
		return &ExecError{Path: cfg.userFile, Cause: fmt.Sprintf("target %q does not match params.two.layerType.pattern %q of config %s", c.C3, cfg.layerSrc, cfg.name)}
	}
	return nil
}
