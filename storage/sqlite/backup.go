package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Backup writes a consistent, compacted copy of the database at path to
// dst with VACUUM INTO, while a running svc keeps writing: it opens its
// own connection beside svc's (no lock file: it writes nothing to path),
// reads one snapshot in one read transaction, which WAL mode lets run
// alongside the writer, and builds the copy from it. The copy is written
// to dst.partial, checked with PRAGMA integrity_check, flushed and renamed
// to dst, so dst is either absent or a whole, checked database. dst must
// not exist.
func Backup(ctx context.Context, path, dst string, busy time.Duration) (size int64, err error) {
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("no database at %s: %w", path, err)
	}
	if _, err := os.Stat(dst); err == nil {
		return 0, fmt.Errorf("%s exists; backup never overwrites a file", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	tmp := dst + ".partial"
	os.Remove(tmp)
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	src, err := sql.Open("sqlite", "file:"+strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)+
		"?_pragma=busy_timeout("+fmt.Sprint(busy.Milliseconds())+")")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	src.SetMaxOpenConns(1)
	var version int
	if err := src.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	if version == 0 {
		return 0, fmt.Errorf("%s is not an svc database (no schema)", path)
	}
	if _, err := src.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return 0, fmt.Errorf("copying %s: %w", path, err)
	}
	src.Close()
	if err := checkFile(ctx, tmp); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	st, _ := f.Stat()
	f.Close()
	if err := os.Rename(tmp, dst); err != nil {
		return 0, err
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		d.Sync()
		d.Close()
	}
	return st.Size(), nil
}

// checkFile runs PRAGMA integrity_check on the database file at path.
func checkFile(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path))
	if err != nil {
		return err
	}
	defer db.Close()
	return IntegrityCheck(ctx, db)
}

// IntegrityCheck runs PRAGMA integrity_check and returns nil when SQLite
// answers "ok", else an error listing what it found.
func IntegrityCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("integrity check failed: %s", strings.Join(found, "; "))
	}
	return nil
}
