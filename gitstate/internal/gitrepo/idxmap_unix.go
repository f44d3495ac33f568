//go:build unix

package gitrepo

import "syscall"

// mapFile maps the first size bytes of f, read-only and shared: the
// kernel's page cache itself, no copy.
func mapFile(f *rawFile, size int64) ([]byte, error) {
	return syscall.Mmap(f.fd, 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }
