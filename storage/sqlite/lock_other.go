//go:build !unix

package sqlite

// fileLock is a no-op where flock does not exist; svc's builds are unix.
type fileLock struct{}

func lockFile(string) (*fileLock, error) { return &fileLock{}, nil }

func (*fileLock) release() {}
