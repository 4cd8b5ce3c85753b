package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/bench/procstat"
)

// pgServer is the PostgreSQL server the postgres scenarios and the INSERT
// yardsticks run on: a private one started for the run (its CPU is this
// run's alone) or a shared one (other users' work counts in its CPU).
type pgServer struct {
	base     string // URL without a database, e.g. postgres://postgres@127.0.0.1:5432
	query    string // "?sslmode=disable" or "?host=/dir"
	pid      int    // the postmaster
	dir      string // private: the temporary directory
	bin      string
	asUser   []string // private, run as root: runuser -u postgres --
	dbSerial int
}

// pgBinDir finds PostgreSQL's server binaries (initdb, pg_ctl, postgres).
func pgBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// startPrivatePG initialises and starts a PostgreSQL server of its own on a
// free port, with the settings of the shared development server (fsync
// and synchronous_commit on, shared_buffers 128MB).
func startPrivatePG(bin string) (*pgServer, error) {
	dir, err := os.MkdirTemp("", "benchsuite-pg-")
	if err != nil {
		return nil, err
	}
	s := &pgServer{dir: dir, bin: bin}
	if u, _ := user.Current(); u != nil && u.Uid == "0" {
		// initdb refuses root: the server runs as the postgres user.
		s.asUser = []string{"runuser", "-u", "postgres", "--"}
		if err := exec.Command("chown", "postgres", dir).Run(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("chown %s: %w", dir, err)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"); err != nil {
		s.stop()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c shared_buffers=128MB -c max_connections=200", port, dir)
	if out, err := s.run(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "120", "start"); err != nil {
		s.stop()
		return nil, fmt.Errorf("pg_ctl start: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		s.stop()
		return nil, err
	}
	s.pid, _ = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	s.base = fmt.Sprintf("postgres://postgres@127.0.0.1:%d", port)
	s.query = "?sslmode=disable"
	return s, nil
}

func (s *pgServer) run(name string, args ...string) ([]byte, error) {
	full := append(append([]string{}, s.asUser...), name)
	full = append(full, args...)
	return exec.Command(full[0], full[1:]...).CombinedOutput()
}

// stop ends a private server and removes its files; a shared one is left.
func (s *pgServer) stop() {
	if s == nil || s.dir == "" {
		return
	}
	if s.pid > 0 {
		_, _ = s.run(filepath.Join(s.bin, "pg_ctl"), "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	}
	os.RemoveAll(s.dir)
}

// sharedPG is a server someone else runs; pid is its postmaster, found by
// its data directory's postmaster.pid or, failing that, as the one process
// named postgres whose parent is not.
func sharedPG(base, dataDir string) (*pgServer, error) {
	s := &pgServer{base: base, query: "?sslmode=disable"}
	if dataDir != "" {
		b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
		if err != nil {
			return nil, err
		}
		s.pid, _ = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		return s, nil
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var roots []int
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		st, err := procstat.Read(pid)
		if err != nil || st.Comm != "postgres" {
			continue
		}
		if parent, err := procstat.Read(st.PPID); err == nil && parent.Comm == "postgres" {
			continue
		}
		roots = append(roots, pid)
	}
	if len(roots) != 1 {
		return nil, fmt.Errorf("found %d postmasters (%v); name the server's data directory with -pg-data", len(roots), roots)
	}
	s.pid = roots[0]
	return s, nil
}

// freshDB creates an empty database and returns its URL and a function
// that drops it.
func (s *pgServer) freshDB(ctx context.Context, prefix string) (string, func(), error) {
	s.dbSerial++
	name := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), s.dbSerial)
	admin := s.base + "/postgres" + s.query
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	drop := func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if conn, err := pgx.Connect(c, admin); err == nil {
			_, _ = conn.Exec(c, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(c)
		}
	}
	return s.base + "/" + name + s.query, drop, nil
}
