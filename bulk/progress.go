package bulk

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress shows how far a bulk run is: documents, bytes, rate and, when
// the total is known, percentage and ETA. On a terminal it redraws one
// line with a bar; otherwise it prints a plain line every interval, so
// logs stay readable.
type Progress struct {
	Verb     string // "import" or "export"
	Total    int64  // total bytes, 0 when unknown
	TotalDoc int64  // total documents, 0 when unknown
	Docs     atomic.Int64
	Bytes    func() int64
	Terminal bool
	Interval time.Duration
	Out      io.Writer

	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	last  int // width of the last terminal line
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Start begins drawing; Finish stops and prints the summary.
func (p *Progress) Start() {
	p.start = time.Now()
	p.stop = make(chan struct{})
	if p.Interval <= 0 {
		p.Interval = 5 * time.Second
		if p.Terminal {
			p.Interval = 200 * time.Millisecond
		}
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.Interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.draw(false)
			}
		}
	}()
}

// Finish stops the display and prints the final line.
func (p *Progress) Finish(outcome string) {
	if p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.draw(true)
	if outcome != "" {
		fmt.Fprintln(p.Out, outcome)
	}
}

func (p *Progress) draw(final bool) {
	el := time.Since(p.start)
	docs := p.Docs.Load()
	var bytes int64
	if p.Bytes != nil {
		bytes = p.Bytes()
	}
	secs := max(el.Seconds(), 1e-3)
	rate := float64(docs) / secs
	brate := float64(bytes) / secs
	frac := -1.0
	switch {
	case p.Total > 0:
		frac = min(float64(bytes)/float64(p.Total), 1)
	case p.TotalDoc > 0:
		frac = min(float64(docs)/float64(p.TotalDoc), 1)
	}
	eta := ""
	if frac > 0 && frac < 1 && !final {
		eta = " ETA " + (time.Duration(float64(el) * (1 - frac) / frac)).Round(time.Second).String()
	}
	stats := fmt.Sprintf("%s docs, %s, %s docs/s, %s/s%s", group(docs), size(bytes), group(int64(rate)), size(int64(brate)), eta)
	if !p.Terminal {
		pct := ""
		if frac >= 0 {
			pct = fmt.Sprintf(" %.1f%%", 100*frac)
		}
		state := "progress"
		if final {
			state = "done in " + el.Round(time.Millisecond).String() + ":"
		}
		fmt.Fprintf(p.Out, "%s %s%s %s\n", p.Verb, state, pct, stats)
		return
	}
	line := p.Verb + " " + stats
	if frac >= 0 {
		const w = 24
		n := int(frac * w)
		line = fmt.Sprintf("%s [%s%s] %3.0f%% %s", p.Verb, strings.Repeat("#", n), strings.Repeat(".", w-n), 100*frac, stats)
	}
	pad := ""
	if p.last > len(line) {
		pad = strings.Repeat(" ", p.last-len(line))
	}
	p.last = len(line)
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(p.Out, "\r%s%s%s", line, pad, end)
}

// group writes n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
