package tools

import (
	"encoding/json"
	"fmt"

	"github.com/gitcodex/git-codex/gitstate"
)

// WalkJSON decodes every record under dir as a T, in path order.
func WalkJSON[T any](tx *gitstate.Tx, dir string, fn func(T)) error {
	return tx.Walk(dir, func(path string, data []byte) error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		fn(v)
		return nil
	})
}

// WalkSnapshot is WalkJSON on a snapshot: what a reader outside a call
// (status, the web page, watch) walks.
func WalkSnapshot[T any](sn *gitstate.Snapshot, dir string, fn func(T)) error {
	return sn.Walk(dir, func(path string, data []byte) error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		fn(v)
		return nil
	})
}
