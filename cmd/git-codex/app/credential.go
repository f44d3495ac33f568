package app

import (
	"os/exec"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/cycle"
	"github.com/urfave/cli/v2"
)

// origin works out who is calling and what it can prove (tools.Origin):
// the caller as session does, the agent credential from --token or
// CODEX_TOKEN, whether an agent's identity is in the environment, and this
// machine's role PSKs. The caller closes the store.
func (e *env) origin(c *cli.Context) (tools.Origin, *gitstate.Store, error) {
	caller, st, err := e.session(c)
	if err != nil {
		return tools.Origin{}, nil, err
	}
	return tools.Origin{
		ID:       caller,
		Token:    c.String("token"),
		AgentEnv: e.getenv("CODEX_INSTANCE") != "" || e.getenv("CODEX_TOKEN") != "",
		PSK:      e.psk,
	}, st, nil
}

// psk reads a cycle role's pre-shared key: CODEX_PSK_<ROLE>, else the
// repository's git config codex.role.<role>.psk. Neither is ever in a ref.
func (e *env) psk(role string) string {
	if v := e.getenv(cycle.EnvPSKName(role)); v != "" {
		return v
	}
	cmd := exec.Command("git", "config", "--get", "codex.role."+role+".psk")
	cmd.Dir = e.dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(out), "\r\n")
}
