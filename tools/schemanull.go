package tools

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

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

// PortableOutput rewrites an inferred output schema into the forms strict
// clients accept without a warning (the MCP Inspector's --strict check,
// the TypeScript SDK's Ajv in strict mode, one-type dialects such as
// Gemini's function declarations), and returns it; it still describes
// exactly what the tool's results marshal to, which
// TestMCPResultsMatchOutputSchemas holds them against. jsonschema-go infers
// every slice and pointer as a type array ["null", T]:
//   - a property marked omitempty is left out when nil, so it is never
//     null: it becomes plain T (most of them, and the cheapest form);
//   - one that may marshal as null (no omitempty; items and map values of
//     pointers) becomes anyOf [{"type":"null"}, T], each with one type;
//   - a value of any JSON (json.RawMessage, any), inferred as {} which
//     constrains nothing, becomes anyOf of the six JSON types.
//
// The envelope's own {"not":{}} (mcp.go) is not the tool's: no tool's
// schema has a not, and PortableOutput leaves one alone.
func PortableOutput(s *jsonschema.Schema) *jsonschema.Schema {
	return portable(s, false)
}

// portable is PortableOutput for one position; omitted says the value is
// left out rather than marshalled as null when nil (an omitempty field).
func portable(s *jsonschema.Schema, omitted bool) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	for name, p := range s.Properties {
		s.Properties[name] = portable(p, !slices.Contains(s.Required, name))
	}
	for name, p := range s.PatternProperties {
		s.PatternProperties[name] = portable(p, false)
	}
	s.Items = portable(s.Items, false)
	if ap := s.AdditionalProperties; ap != nil && !unconstrained(ap) {
		// a map of any values keeps {}: it is sent as additionalProperties
		// true, the boolean form strict linters accept there
		s.AdditionalProperties = portable(ap, false)
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems} {
		for i, p := range list {
			list[i] = portable(p, false)
		}
	}
	for name, p := range s.Defs {
		s.Defs[name] = portable(p, false)
	}
	switch {
	case len(s.Types) == 2 && s.Types[0] == "null" && omitted:
		s.Type, s.Types = s.Types[1], nil
	case len(s.Types) == 2 && s.Types[0] == "null":
		inner := *s
		inner.Type, inner.Types, inner.Description = s.Types[1], nil, ""
		return &jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{{Type: "null"}, &inner}}
	case len(s.Types) > 1:
		// no inferred schema has another union; spell it out all the same
		var branches []*jsonschema.Schema
		for _, t := range s.Types {
			if t != "null" || !omitted {
				branches = append(branches, &jsonschema.Schema{Type: t})
			}
		}
		s.Types, s.AnyOf = nil, append(s.AnyOf, branches...)
	case unconstrained(s):
		s.AnyOf = anyJSON(omitted)
	}
	return s
}

// unconstrained reports a schema that accepts any value (jsonschema-go's
// {} for json.RawMessage and any): strict linters flag it as a likely
// mistake, so it is written out as anyJSON instead.
func unconstrained(s *jsonschema.Schema) bool {
	return s.Type == "" && len(s.Types) == 0 && s.Ref == "" && s.Enum == nil && s.Const == nil &&
		s.AnyOf == nil && s.OneOf == nil && s.AllOf == nil && s.Not == nil &&
		s.Properties == nil && s.Items == nil && s.AdditionalProperties == nil
}

// anyJSON is "any JSON value" with a single type per branch; null only
// where the value can be null.
func anyJSON(omitted bool) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, t := range []string{"object", "array", "string", "number", "boolean", "null"} {
		if t == "null" && omitted {
			continue
		}
		out = append(out, &jsonschema.Schema{Type: t})
	}
	return out
}
