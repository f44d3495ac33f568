package instance

import (
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// The screens an agent CLI stops at before it works: dialogs and menus
// that wait for a person's answer. In an unattended pane nobody answers,
// so spawn reports them (with what to do once) instead of waiting, and
// send never types into one (keys typed there pick options: on Codex CLI's
// sign-in menu they started a device-code login).
//
// Each was seen on the pinned CLIs (Claude Code 2.1.328, Codex CLI
// 0.169.0, Gemini CLI 0.61.0) in a fresh home directory; docs/DELEGATION.md
// has the list and what each needs.

// A BlockingScreen is one such screen: all of its marks on the pane, what
// it is, and what a person does once so that it never shows again.
type BlockingScreen struct {
	cli   string   // the built-in launcher it belongs to; "" for any
	marks []string // all on the screen
	What  string
	// todo is what to do once; %[1]s is the repository's main work tree.
	todo string
	// approval marks a question the agent asks while it works (may it run
	// a command?): send never types into it, but it is no reason to fail
	// a spawn.
	approval bool
}

var blockingScreens = []BlockingScreen{
	{cli: "claude", marks: []string{"Quick safety check", "trust"}, What: "Claude Code's workspace-trust dialog",
		todo: "trust the repository once: run `claude` in %[1]s and choose \"Yes, I trust this folder\" (Claude Code looks a worktree's trust up under its main repository); `git codex doctor claude` checks it"},
	{cli: "claude", marks: []string{"Do you trust the files in this folder"}, What: "Claude Code's workspace-trust dialog",
		todo: "trust the repository once: run `claude` in %[1]s and accept the trust dialog; `git codex doctor claude` checks it"},
	{cli: "claude", marks: []string{"Detected a custom API key"}, What: "Claude Code's question whether to use ANTHROPIC_API_KEY",
		todo: "answer it once in an interactive `claude` (choose Yes); `git codex doctor claude` checks it"},
	{cli: "claude", marks: []string{"Select login method"}, What: "Claude Code's sign-in",
		todo: "sign Claude Code in once: run `claude` and finish its first-run setup; `git codex doctor claude` checks it"},
	{cli: "claude", marks: []string{"Choose the text style"}, What: "Claude Code's first-run setup",
		todo: "run `claude` once and finish its first-run setup; `git codex doctor claude` checks it"},
	{cli: "codex", marks: []string{"Sign in with ChatGPT"}, What: "Codex CLI's sign-in menu",
		todo: "sign Codex CLI in once: `codex login` (or `printenv OPENAI_API_KEY | codex login --with-api-key`); `git codex doctor codex` checks it"},
	{cli: "codex", marks: []string{"Trust this folder?"}, What: "Codex CLI's folder-trust prompt",
		todo: "trust the repository once: run `codex` in %[1]s and choose \"Trust and continue\" (Codex CLI applies it to the repository root); `git codex doctor codex` checks it"},
	{cli: "gemini", marks: []string{"How would you like to authenticate"}, What: "Gemini CLI's sign-in choice",
		todo: "choose how Gemini CLI signs in once: run `gemini` and pick one, or set security.auth.selectedType in ~/.gemini/settings.json (gemini-api-key, with GEMINI_API_KEY set); `git codex doctor gemini` checks it"},
	{cli: "gemini", marks: []string{"Do you trust", "folder"}, What: "Gemini CLI's folder-trust dialog",
		todo: "git codex trusts its own worktrees for Gemini CLI (GEMINI_CLI_TRUST_WORKSPACE); if this shows, check that nothing in the pane's environment unsets it"},
	// questions asked while working, as the shipped CLIs word them (found
	// in their bundles): a key typed there answers them
	{cli: "claude", marks: []string{"Do you want to proceed?"}, What: "Claude Code's question whether it may go on (a permission prompt)", approval: true,
		todo: "attach (`git codex attach <id>`) and answer it"},
	{cli: "claude", marks: []string{"Do you want to allow this connection?"}, What: "Claude Code's question whether to allow a connection", approval: true,
		todo: "attach (`git codex attach <id>`) and answer it"},
	{cli: "codex", marks: []string{"Would you like to run the following command?"}, What: "Codex CLI's approval of a command", approval: true,
		todo: "attach (`git codex attach <id>`) and answer it"},
	{cli: "codex", marks: []string{"Would you like to make the following edits?"}, What: "Codex CLI's approval of edits", approval: true,
		todo: "attach (`git codex attach <id>`) and answer it"},
	{cli: "codex", marks: []string{"Would you like to grant these permissions?"}, What: "Codex CLI's approval of permissions", approval: true,
		todo: "attach (`git codex attach <id>`) and answer it"},
	{cli: "gemini", marks: []string{"Allow execution of"}, What: "Gemini CLI's approval of a tool call", approval: true,
		todo: "attach (`git codex attach <id>`) and answer it"},
	// any CLI's menu: the footers of the selection lists seen
	{marks: []string{"Enter to confirm"}, What: "a menu waiting for a choice",
		todo: "attach (`git codex attach <id>`) to see it, answer it once by hand, and make the answer stick in the CLI's settings"},
	{marks: []string{"Press enter to continue"}, What: "a menu waiting for a choice",
		todo: "attach (`git codex attach <id>`) to see it and answer it once by hand"},
	{marks: []string{"(Use Enter to select)"}, What: "a menu waiting for a choice",
		todo: "attach (`git codex attach <id>`) to see it and answer it once by hand"},
	{marks: []string{"enter continue · esc back"}, What: "a menu waiting for a choice",
		todo: "attach (`git codex attach <id>`) to see it and answer it once by hand"},
}

// BlockedAt finds the screen an agent of launcher cli waits at, if its
// pane shows one it is known to stop at; the CLI's own screens come
// before the generic menus.
func BlockedAt(cli, screen string) (BlockingScreen, bool) {
	for _, generic := range []bool{false, true} {
		for _, b := range blockingScreens {
			if (b.cli == "") != generic || (!generic && b.cli != cli) {
				continue
			}
			all := true
			for _, m := range b.marks {
				if !strings.Contains(screen, m) {
					all = false
					break
				}
			}
			if all {
				return b, true
			}
		}
	}
	return BlockingScreen{}, false
}

// advice is what to do once, for the repository whose main work tree is
// root.
func (b BlockingScreen) advice(root string) string {
	if strings.Contains(b.todo, "%[1]s") {
		return fmt.Sprintf(b.todo, root)
	}
	return b.todo
}

// The input line of each built-in CLI, as the pinned CLIs show it in a
// pane (captured against tools/modelapi): where a typed message goes, both
// while the agent is idle and while it works (all three take a message
// typed during a turn and act on it after). send types only where the
// cursor is on such a line: a screen that is neither a known dialog
// (blockingScreens) nor the input, say a settings panel or a menu a newer
// CLI added, gets nothing typed into it.
//
//   - claude: "❯ " right under the rule ("────") that tops its input box.
//     The transcript shows the person's messages with the same "❯ ", and
//     with a panel open (/config) the cursor was parked on such a line:
//     the rule is what tells the input;
//   - codex: its composer, "› Ask Codex to do anything" while empty (the
//     transcript's messages also start with "›");
//   - gemini: its input box, ">   Type your message or @path/to/file"
//     while empty.
//
// Codex CLI and Gemini CLI are known at their empty input only: text left
// there (a person's, half typed) would have the message glued to it.
func atInput(cli, above, line string) (known, ok bool) {
	t := strings.TrimSpace(line)
	switch cli {
	case "claude":
		rest, found := strings.CutPrefix(t, "❯")
		return true, found && !menuOption.MatchString(strings.TrimSpace(rest)) && isRule(above)
	case "codex":
		return true, strings.HasPrefix(t, "›") && strings.Contains(t, "Ask Codex to do anything")
	case "gemini":
		return true, strings.HasPrefix(t, ">") && strings.Contains(t, "Type your message")
	}
	return false, false
}

// inputLook says what a CLI's input line looks like, for messages.
func inputLook(cli string) string {
	return map[string]string{"claude": `"❯ " under its input box's rule`, "codex": `"› Ask Codex to do anything"`, "gemini": `">   Type your message or @path/to/file"`}[cli]
}

// menuOption is a numbered option of a selection list ("❯ 1. Yes").
var menuOption = tools.LazyRegexp(`^\d+\.\s`)

// isRule reports whether a line is a horizontal rule of box-drawing
// characters.
func isRule(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= 3*len("─") && strings.Trim(t, "─") == ""
}

// busyMarks are what the agent CLIs show while they work (a turn runs, a
// tool call is under way), near the bottom of their screen, as the pinned
// versions draw them: typed keys would queue behind the turn, or stay on
// the input line after Enter (Gemini CLI). Matched in lower case.
var busyMarks = []string{
	"esc to interrupt", // Claude Code ("esc to interrupt"), Codex CLI ("Esc to interrupt")
	"esc to cancel",    // Gemini CLI ("(esc to cancel, 3s)", its Responding state)
}

// BusyAt finds a busy mark in the last lines of a screen that hold text
// (the status line sits just above the input box, not in the transcript
// above it, which may quote the words).
func BusyAt(screen string) (string, bool) {
	lines := strings.Split(strings.TrimRight(screen, " \n"), "\n")
	n := 0
	for i := len(lines) - 1; i >= 0 && n < 8; i-- {
		l := strings.ToLower(lines[i])
		if strings.TrimSpace(l) == "" {
			continue
		}
		n++
		for _, m := range busyMarks {
			if strings.Contains(l, m) {
				return m, true
			}
		}
	}
	return "", false
}
