package main

import (
	"fmt"

	"svc/bench/procstat"
)

// CPU accounting of a run from /proc/<pid>/stat: on a shared machine the
// CPU time a request costs the server and the database is steadier than a
// rate, and free of the load tool's own cost.

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = procstat.ClockTicks

// procTicks returns utime+stime of pid and its parent pid, in clock ticks
// (bench/procstat parses /proc/<pid>/stat).
func procTicks(pid int) (ticks, ppid int64, err error) {
	st, err := procstat.Read(pid)
	return st.Ticks, int64(st.PPID), err
}

// treeTicks is the CPU of pid and its direct children (a postmaster and
// its backends, writers and WAL writer).
func treeTicks(pid int) (int64, error) { return procstat.TreeTicks(pid) }

// cpuProbe samples the server and database CPU before and after a run.
type cpuProbe struct {
	svcPID, pgPID int
	svc0, pg0     int64
	svcDur, pgDur float64 // seconds of CPU over the run
	svcErr, pgErr error
}

func (p *cpuProbe) start() {
	if p.svcPID > 0 {
		p.svc0, _, p.svcErr = procTicks(p.svcPID)
	}
	if p.pgPID > 0 {
		p.pg0, p.pgErr = treeTicks(p.pgPID)
	}
}

func (p *cpuProbe) stop() {
	if p.svcPID > 0 && p.svcErr == nil {
		var t int64
		t, _, p.svcErr = procTicks(p.svcPID)
		p.svcDur = float64(t-p.svc0) / clockTicks
	}
	if p.pgPID > 0 && p.pgErr == nil {
		var t int64
		t, p.pgErr = treeTicks(p.pgPID)
		p.pgDur = float64(t-p.pg0) / clockTicks
	}
}

// report prints CPU per request and, when a request carries several
// entities, per entity.
func (p *cpuProbe) report(requests uint64, perRequest int, wall float64) string {
	if requests == 0 || (p.svcPID <= 0 && p.pgPID <= 0) {
		return ""
	}
	unit, n := "request", float64(requests)
	if perRequest > 1 {
		unit, n = "entity", n*float64(perRequest)
	}
	var s string
	line := func(name string, pid int, d float64, err error) {
		if pid <= 0 {
			return
		}
		if err != nil {
			s += fmt.Sprintf("%s CPU: %v\n", name, err)
			return
		}
		s += fmt.Sprintf("%s CPU %.2f s (%.2f cores): %.1f µs per %s\n", name, d, d/wall, d/n*1e6, unit)
	}
	line("server", p.svcPID, p.svcDur, p.svcErr)
	line("database", p.pgPID, p.pgDur, p.pgErr)
	return s
}
