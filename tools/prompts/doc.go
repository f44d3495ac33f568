// Package prompts is git codex's prompt registry: the commands a team keeps
// in its working tree as a Climpt registry (.agent/<agent>/registry.json and
// templates at .agent/<agent>/prompts/<c1>/<c2>/<c3>/f_<edition>[_<adaptation>].md),
// plus the templates git codex ships for its own prompts, searched by
// meaning (TF-IDF cosine) and rendered with their variables filled.
//
// It is pure: it reads files under a root directory it is given and knows
// nothing of git or the state. The tools (tools/prompt) and the MCP
// prompts capability are adapters over it.
package prompts
