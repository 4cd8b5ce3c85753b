package procstat

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name with a space and a ')' of its own.
	s, err := ParseStat([]byte("4242 (post gres: x)) S 17 4242 4242 0 -1 4194560 100 0 0 0 123 45 0 0 20 0 1 0 99 1000 10 18446744073709551615"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Comm != "post gres: x)" || s.PPID != 17 || s.Ticks != 168 {
		t.Fatalf("%+v", s)
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3", "1 (x) S a 1 1 0 -1 0 0 0 0 0 z 1 0"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseRSS(t *testing.T) {
	kb, err := ParseRSS([]byte("Name:\tsvc\nVmHWM:\t   50 kB\nVmRSS:\t   40508 kB\nRssAnon:\t 1 kB\n"))
	if err != nil || kb != 40508 {
		t.Fatalf("%d %v", kb, err)
	}
	if kb, err := ParseField([]byte("VmRSS:\t 1 kB\nRssAnon:\t   11492 kB\n"), "RssAnon:"); err != nil || kb != 11492 {
		t.Fatalf("%d %v", kb, err)
	}
	if _, err := ParseRSS([]byte("Name:\tkthread\n")); err == nil {
		t.Fatal("no VmRSS accepted")
	}
}

// TestReadSelf: this process's own /proc entries parse; its parent's tree
// holds it.
func TestReadSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	s, err := Read(os.Getpid())
	if err != nil || s.PPID != os.Getppid() || s.Ticks < 0 {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := TreeTicks(os.Getppid()); err != nil {
		t.Fatal(err)
	}
	if kb, err := RSS(os.Getpid()); err != nil || kb <= 0 {
		t.Fatalf("rss %d %v", kb, err)
	}
	if Load1() < 0 {
		t.Fatal("no load average")
	}
	if _, err := Read(-1); err == nil {
		t.Fatal("no error for a missing process")
	}
}
