package tools

import "github.com/google/jsonschema-go/jsonschema"

// nonNullable makes the input schema's slices and maps plain arrays and
// objects: jsonschema-go infers them as ["null","array"], legal but less
// portable (clients that map tool schemas onto one-type dialects reject
// them; the MCP Inspector's --strict check warns), and no caller means
// null where it can leave the field out.
func nonNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		nonNullable(p)
	}
	nonNullable(s.Items)
	nonNullable(s.AdditionalProperties)
}
