// Package tools is the framework every git codex operation is defined on:
// its name, its typed input and output (whose JSON schema both adapters
// publish), the permission key the policy checks, and its handler. The MCP
// server (`git codex mcp`) and the CLI (`git codex <noun> <verb>`, `git
// codex call`) are thin adapters over one Registry, so a tool is reachable
// both ways with one schema, one permission check and one audit record.
//
// The framework knows no noun. The tools themselves, their record kinds
// and their config keys live in the packages above it (tools/mail,
// tools/decision, tools/prompt, tools/lock, tools/cycle, tools/instance,
// tools/delegate, tools/review, tools/forge, tools/work), which import it;
// tools/builtin assembles them into the Catalog NewRegistry takes.
//
// A call is one gitstate transaction: a refused or failed call still
// commits, with its error code in the trailers and no other change; a
// call with work outside git (Call.After) records its outcome in one more.
// This package never imports go-git; it reads and writes the state through
// gitstate's Store, Tx and Snapshot.
package tools
