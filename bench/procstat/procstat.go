// Package procstat reads the CPU time and resident size of processes from
// /proc, for the load tools under bench/: on a shared machine the CPU a
// request costs the server and the database is steadier than a rate, and
// free of the load tool's own cost.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// ClockTicks is USER_HZ, 100 on every Linux this runs on.
const ClockTicks = 100

// Stat is what /proc/<pid>/stat says about a process.
type Stat struct {
	Comm  string
	PPID  int
	Ticks int64 // utime + stime, in ClockTicks
}

// ParseStat reads the contents of a /proc/<pid>/stat file. The command
// name is parenthesised and may hold spaces and parentheses: fields start
// after the last ')'. Field 3 is the state, 4 ppid, 14 utime, 15 stime.
func ParseStat(b []byte) (Stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("stat: no command name")
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("stat: %d fields after the command name", len(f))
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	ut, err2 := strconv.ParseInt(string(f[11]), 10, 64)
	st, err3 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Stat{}, fmt.Errorf("stat: bad number in %q", b[end+1:])
	}
	return Stat{Comm: string(b[open+1 : end]), PPID: ppid, Ticks: ut + st}, nil
}

// Read reads /proc/<pid>/stat.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/%w", pid, err)
	}
	return s, nil
}

// TreeTicks is the CPU of pid and its direct children (a postmaster and
// its backends, writers and WAL writer: every process of a PostgreSQL
// server). A child that exits during a run takes its CPU with it; pooled
// connections live through a run.
func TreeTicks(pid int) (int64, error) {
	root, err := Read(pid)
	if err != nil {
		return 0, err
	}
	total := root.Ticks
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		child, err := strconv.Atoi(filepath.Base(d))
		if err != nil || child == pid {
			continue
		}
		if s, err := Read(child); err == nil && s.PPID == pid {
			total += s.Ticks
		}
	}
	return total, nil
}

// ParseRSS returns VmRSS in KiB from the contents of /proc/<pid>/status.
func ParseRSS(status []byte) (int64, error) { return ParseField(status, "VmRSS:") }

// ParseField returns a "Name:   123 kB" line of /proc/<pid>/status in KiB
// (VmRSS:, RssAnon:, RssFile:, VmHWM:).
func ParseField(status []byte, name string) (int64, error) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 && string(f[1]) == "kB" {
				return strconv.ParseInt(string(f[0]), 10, 64)
			}
			return 0, fmt.Errorf("status: %s line %q", name, line)
		}
	}
	return 0, fmt.Errorf("status: no %s line", name)
}

// RSS returns the resident size of pid in KiB (/proc/<pid>/status VmRSS).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return ParseRSS(b)
}

// Load1 is the one-minute load average (/proc/loadavg).
func Load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return -1
	}
	return v
}
