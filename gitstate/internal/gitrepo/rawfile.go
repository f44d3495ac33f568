package gitrepo

import (
	"io"
	"io/fs"
	"syscall"
)

// rawFile is a file used through its descriptor alone. An os.File of a
// regular file costs four fcntl calls and a failing epoll_ctl on open (the
// runtime tries to register every file with its poller); a transaction
// opens or creates a dozen files under the writer lock, and on the VM the
// benchmarks run on those calls were a fifth of a writer's CPU
// (BenchmarkParallelProcesses). Its methods retry on EINTR and report
// errors as os does (*fs.PathError wrapping the errno, so errors.Is with
// fs.ErrNotExist and fs.ErrExist works).
type rawFile struct {
	fd   int
	name string
}

func openRaw(name string, flag int, perm uint32) (*rawFile, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, perm)
		if err == nil {
			return &rawFile{fd: fd, name: name}, nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// createRaw creates name, failing if it exists, for writing.
func createRaw(name string, perm uint32) (*rawFile, error) {
	return openRaw(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, perm)
}

func (f *rawFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(f.fd, b[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Write(f.fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Sync() error {
	for {
		err := syscall.Fsync(f.fd)
		if err != syscall.EINTR {
			if err != nil {
				return &fs.PathError{Op: "sync", Path: f.name, Err: err}
			}
			return nil
		}
	}
}

// stat returns the file's size and inode number.
func (f *rawFile) stat() (size int64, ino uint64, err error) {
	var st syscall.Stat_t
	for {
		err = syscall.Fstat(f.fd, &st)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, 0, &fs.PathError{Op: "stat", Path: f.name, Err: err}
	}
	return st.Size, st.Ino, nil
}

func (f *rawFile) Close() error {
	if err := syscall.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// readFileRaw is os.ReadFile without the os.File.
func readFileRaw(name string) ([]byte, error) {
	f, err := openRaw(name, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, _, err := f.stat()
	if err != nil {
		return nil, err
	}
	// a file that grows while read (a ref rewritten in place, which git
	// never does) is read up to its size at open, then to its end
	b := make([]byte, 0, size+1)
	for {
		m, err := syscall.Read(f.fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		case m == 0:
			return b, nil
		}
		b = b[:len(b)+m]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// writeFileRaw creates name (failing if it exists) holding data, fsynced if
// sync, and returns its inode number.
func writeFileRaw(name string, perm uint32, data []byte, sync bool) (ino uint64, err error) {
	f, err := createRaw(name, perm)
	if err != nil {
		return 0, err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if err == nil {
		_, ino, err = f.stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return ino, err
}
