package tools

import (
	"encoding/json"
	"fmt"

	"github.com/gitcodex/git-codex/gitstate"
)

// walkJSON decodes every record under dir as a T, in path order.
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
