package migrations

import "io/fs"

// mustSub roots an embedded tree at dir; the directory is embedded at
// build time, so failing here is a build defect, not a runtime condition.
func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic("migrations: " + err.Error())
	}
	return s
}
