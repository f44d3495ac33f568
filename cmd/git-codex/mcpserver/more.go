package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools an agent's policy permits but tools/list does not show up
// front (tools.Deferred: what its kind of work rarely needs) are one step
// away through two tools the server adds to such a list: tool_find shows
// their descriptions and input schemas, tool_call calls one. tool_call's
// description names every one of them, so a client that defers tools
// behind a keyword search (Claude Code's ToolSearch) and a model reading
// the list both find them by name. A call through tool_call is the
// registry's call of the tool itself: same permission check, audit commit
// (Codex-Tool is the tool's name) and envelope.
const (
	toolFind = "tool_find"
	toolCall = "tool_call"
)

// toolFindIn is tool_find's input.
type toolFindIn struct {
	Query string `json:"query,omitempty"`
}

// toolFound is one deferred tool as tool_find shows it.
type toolFound struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
}

// toolCallIn is tool_call's input.
type toolCallIn struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// moreTools are tool_find and tool_call for the deferred tools named.
func (s *Server) moreTools(names []string) []*mcp.Tool {
	notDestructive, destructive := false, true
	str := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: desc} }
	closed := &jsonschema.Schema{Not: &jsonschema.Schema{}}
	found := &jsonschema.Schema{Type: "object", Required: []string{"tools"}, Properties: map[string]*jsonschema.Schema{
		"tools": {Type: "array", Items: &jsonschema.Schema{Type: "object", Required: []string{"name", "description", "input_schema"},
			Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}, "description": {Type: "string"}, "input_schema": {Type: "object"}}}},
	}}
	return []*mcp.Tool{{
		Name:        toolFind,
		Description: "Find more tools (not listed up front; see tool_call): name, description, input schema of those matching a query.",
		InputSchema: &jsonschema.Schema{Type: "object", AdditionalProperties: closed,
			Properties: map[string]*jsonschema.Schema{"query": str("words of a name or description; empty: all")}},
		OutputSchema: envelopeSchema(found, s.errSchema),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &notDestructive, IdempotentHint: true},
	}, {
		Name:        toolCall,
		Description: "Call a tool not listed up front (tool_find gives its input schema): " + strings.Join(names, ", ") + ".",
		InputSchema: &jsonschema.Schema{Type: "object", AdditionalProperties: closed, Required: []string{"name"},
			Properties: map[string]*jsonschema.Schema{"name": str(""), "arguments": {Type: "object"}}},
		OutputSchema: envelopeSchema(&jsonschema.Schema{Type: "object", Description: "the tool's own result"}, s.errSchema),
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}}
}

// findTools answers tool_find from the state's tip: the deferred tools
// whose name or description has any of the query's words. It lists, as
// tools/list does, and records nothing.
func (s *Server) findTools(ctx context.Context, args json.RawMessage) tools.Result {
	var in toolFindIn
	if len(args) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(args)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return tools.Result{Error: tools.Errorf(tools.InvalidInput, "invalid arguments for %s: %v; pass {\"query\": \"words\"}", toolFind, err)}
		}
	}
	var deferred []*tools.Tool
	err := s.st.View(ctx, func(sn *gitstate.Snapshot) error {
		var err error
		_, deferred, err = s.reg.Listing(sn, s.caller)
		return err
	})
	if err != nil {
		return tools.Result{Error: tools.StoreError(err)}
	}
	words := strings.Fields(strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(in.Query)))
	out := []toolFound{}
	for _, t := range deferred {
		text := strings.ToLower(strings.ReplaceAll(t.Name, "_", " ") + " " + t.Description)
		match := len(words) == 0
		for _, w := range words {
			match = match || strings.Contains(text, w)
		}
		if match {
			out = append(out, toolFound{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema()})
		}
	}
	return tools.Result{OK: true, Data: map[string]any{"tools": out}}
}

// unwrapCall is the tool and arguments a tool_call names.
func unwrapCall(args json.RawMessage) (string, json.RawMessage, *tools.Error) {
	var in toolCallIn
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Name == "" || in.Name == toolCall || in.Name == toolFind {
		msg := "name is required"
		if err != nil {
			msg = err.Error()
		} else if in.Name != "" {
			msg = "name must be another tool's"
		}
		return "", nil, tools.Errorf(tools.InvalidInput, "invalid arguments for %s: %s; pass {\"name\": \"<tool>\", \"arguments\": {...}}", toolCall, msg).With("field", "name")
	}
	if len(in.Arguments) == 0 {
		in.Arguments = json.RawMessage("{}")
	}
	return in.Name, in.Arguments, nil
}
