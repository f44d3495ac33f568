//go:build !unix

package gitrepo

import "errors"

// mapFile is not done here: a widened index cache reads blocks instead.
func mapFile(*rawFile, int64) ([]byte, error) {
	return nil, errors.New("no mmap on this system")
}

func unmapFile([]byte) error { return nil }
