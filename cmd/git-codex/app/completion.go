package app

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// completionOptions is what `git codex completion` runs with.
type completionOptions struct {
	Shell string
}

func (e *env) completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: "The script completes `git codex ...` (through git's own completion) and `git-codex ...`,\n" +
			"asking git-codex itself for the commands and flags, so it stays current. Load it with:\n" +
			"  bash: echo 'source <(git codex completion bash)' >> ~/.bashrc\n" +
			"  zsh:  echo 'source <(git codex completion zsh)' >> ~/.zshrc   (after compinit)\n" +
			"  fish: git codex completion fish > ~/.config/fish/completions/git-codex.fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{err: fmt.Errorf("completion takes one shell: bash, zsh or fish")}
			}
			return e.runCompletion(completionOptions{Shell: c.Args().First()})
		},
	}
}

func (e *env) runCompletion(opts completionOptions) error {
	script, ok := completionScripts[opts.Shell]
	if !ok {
		return usageError{err: fmt.Errorf("no completion for shell %q; choose bash, zsh or fish", opts.Shell)}
	}
	_, err := fmt.Fprint(e.stdout, script)
	return err
}

// completionScripts ask `git-codex ... --generate-bash-completion`
// (urfave/cli's completion protocol: the candidates, one a line) for the
// words that may follow. git's bash completion calls _git_codex for `git
// codex ...`, zsh's calls _git-codex, and fish's completes `git codex ...`
// with the completions of git-codex.
var completionScripts = map[string]string{
	"bash": `# git codex completion for bash: source <(git codex completion bash)
__git_codex_complete() {
	local cur="${@: -1}" opts
	local -a args=("${@:1:$#-1}")
	if [[ "$cur" == -* ]]; then
		opts=$(git-codex "${args[@]}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		opts=$(git-codex "${args[@]}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
# git's completion calls this for "git codex ...", with words and cword set
_git_codex() {
	__git_codex_complete "${words[@]:2:cword-2}" "${words[cword]}"
}
_git_codex_cli() {
	__git_codex_complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "${COMP_WORDS[COMP_CWORD]}"
}
complete -o default -F _git_codex_cli git-codex
`,
	"zsh": `#compdef git-codex
# git codex completion for zsh: source <(git codex completion zsh)
_git_codex_words() {
	local -a opts
	local cur=${words[-1]}
	if [[ "$cur" == -* ]]; then
		opts=("${(@f)$(git-codex ${words[2,-2]} $cur --generate-bash-completion 2>/dev/null)}")
	else
		opts=("${(@f)$(git-codex ${words[2,-2]} --generate-bash-completion 2>/dev/null)}")
	fi
	if [[ "${opts[1]}" != "" ]]; then
		_describe 'git codex' opts
	else
		_files
	fi
}
# zsh's git completion calls _git-codex for "git codex ..." (words start at "codex")
_git-codex() { _git_codex_words }
compdef _git_codex_words git-codex
zstyle ':completion:*:*:git:*' user-commands codex:'coordinate AI coding agents, state in git'
`,
	"fish": `# git codex completion for fish: git codex completion fish > ~/.config/fish/completions/git-codex.fish
# (fish completes "git codex ..." with git-codex's completions)
function __git_codex_complete
	set -l words (commandline -opc)
	set -e words[1]
	set -l cur (commandline -ct)
	if string match -q -- '-*' $cur
		git-codex $words $cur --generate-bash-completion 2>/dev/null
	else
		git-codex $words --generate-bash-completion 2>/dev/null
	end
end
complete -c git-codex -f -a '(__git_codex_complete)'
`,
}
