//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// fileLock is an exclusive advisory lock (flock) on a file beside the
// database: a second svc on the same file is refused at start instead of
// writing beside the first. The kernel drops the lock when the process
// dies, so a SIGKILLed svc never leaves a stale lock behind.
type fileLock struct{ f *os.File }

func lockFile(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening the lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by another svc process (it holds the lock %s); stop that one or set SVC_SQLITE_PATH to another file",
				ErrLocked, strings.TrimSuffix(path, ".lock"), path)
		}
		return nil, fmt.Errorf("sqlite: locking %s: %w", path, err)
	}
	return &fileLock{f}, nil
}

func (l *fileLock) release() {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
