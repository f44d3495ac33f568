package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// ValidateRecord checks a record that sync would bring in from another
// machine (a gitstate.Validator): it must decode as its kind, and the ids
// inside must match its path, so the tools can read it afterwards and no
// record can claim to be another. Paths this version does not know (a newer
// version's records) only have to be JSON.
func ValidateRecord(path string, data []byte) error {
	parts := strings.Split(path, "/")
	name := strings.TrimSuffix(parts[len(parts)-1], ".json")
	switch {
	case path == pathConfig:
		var c Config
		return strictDecode(data, &c)
	case parts[0] == dirAgents && len(parts) == 2:
		var a Agent
		if err := strictDecode(data, &a); err != nil {
			return err
		}
		if a.ID != name || ValidateAgentID(a.ID) != nil {
			return fmt.Errorf("agent record names %q", a.ID)
		}
		if _, err := ParseAgentType(string(a.Type)); err != nil || a.Type == TypeHuman {
			return fmt.Errorf("agent type %q", a.Type)
		}
	case parts[0] == dirMail && len(parts) == 5:
		var m Mail
		if err := strictDecode(data, &m); err != nil {
			return err
		}
		if m.ID != name || !mailIDPattern.MatchString(m.ID) || m.To != parts[1] || parts[2]+"/"+parts[3] != gitstate.Fanout(m.ID) {
			return fmt.Errorf("mail record %q to %q does not belong at this path", m.ID, m.To)
		}
	case parts[0] == dirDecisions && len(parts) == 4:
		var d Decision
		if err := strictDecode(data, &d); err != nil {
			return err
		}
		if d.ID != name || parts[1]+"/"+parts[2] != gitstate.Fanout(d.ID) {
			return fmt.Errorf("decision record %q does not belong at this path", d.ID)
		}
	default:
		if !json.Valid(data) {
			return fmt.Errorf("not JSON")
		}
	}
	return nil
}

// strictDecode decodes one JSON object with no trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}
