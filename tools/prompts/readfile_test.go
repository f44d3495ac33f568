package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileOnlyRegular: a FIFO (which would block open() for ever), a
// device (endless), a directory and a file over the limit are refused at
// once, without reading them.
func TestReadFileOnlyRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil { // 2 GB, sparse
		t.Fatal(err)
	}
	f.Close()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("hello"), 0o644)
	for _, tt := range []struct{ name, path, want string }{
		{"fifo", fifo, "a FIFO"},
		{"device", zero, "a character device"},
		{"directory", dir, "a directory"},
		{"too big", big, "the limit is 1048576"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadFile(tt.path, MaxTemplateBytes); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err %v, want %q", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				unblock(fifo)
				t.Fatal("ReadFile blocked")
			}
		})
	}
	if b, err := ReadFile(ok, 5); err != nil || string(b) != "hello" {
		t.Errorf("a regular file: %q, %v", b, err)
	}
	if _, err := ReadFile(ok, 4); err == nil {
		t.Error("a file over the limit was read")
	}
}

// unblock opens a FIFO for writing, releasing a reader blocked in open().
func unblock(fifo string) {
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
