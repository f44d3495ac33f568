// Package tools defines every git codex operation once: its name, its typed
// input and output (whose JSON schema both adapters publish), the permission
// key the policy checks, and its handler. The MCP server (`git codex mcp`)
// and the CLI (`git codex <noun> <verb>`, `git codex call`) are thin adapters
// over one Registry, so a tool added here is reachable both ways with one
// schema, one permission check and one audit record.
//
// Every call is one gitstate transaction: a refused or failed call still
// commits, with its error code in the trailers and no other change.
// This package never imports go-git; it speaks to the store only through
// gitstate.Tx.
package tools
