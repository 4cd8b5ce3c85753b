package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestCPUProbeReadsProc: the probe reads this process's CPU from
// /proc/<pid>/stat, sees it grow under work, and reports per request and
// per entity.
func TestCPUProbeReadsProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	pid := os.Getpid()
	ticks, ppid, err := procTicks(pid)
	if err != nil || ppid != int64(os.Getppid()) || ticks < 0 {
		t.Fatalf("procTicks: %d ticks, ppid %d (want %d): %v", ticks, ppid, os.Getppid(), err)
	}
	// The parent's tree holds this process.
	if _, err := treeTicks(os.Getppid()); err != nil {
		t.Fatal(err)
	}
	p := &cpuProbe{svcPID: pid, pgPID: os.Getppid()}
	p.start()
	deadline := time.Now().Add(60 * time.Second)
	x := 0
	for {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		now, _, _ := procTicks(pid)
		if now-p.svc0 >= 5 || time.Now().After(deadline) {
			break
		}
	}
	p.stop()
	if p.svcErr != nil || p.svcDur <= 0 {
		t.Fatalf("no CPU seen: %v %v (x=%d)", p.svcDur, p.svcErr, x)
	}
	perReq := p.report(100, 0, 1)
	perEnt := p.report(100, 1000, 1)
	if !strings.Contains(perReq, "µs per request") || !strings.Contains(perEnt, "µs per entity") || !strings.Contains(perReq, "database CPU") {
		t.Fatalf("reports:\n%s\n%s", perReq, perEnt)
	}
	if _, _, err := procTicks(-1); err == nil {
		t.Fatal("no error for a missing process")
	}
}
