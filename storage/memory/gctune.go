package memory

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The Go collector lets the heap grow by GOGC percent of the live heap
// before its next cycle, so a process whose live heap is mostly stored
// documents keeps about as much again in headroom: with the default
// GOGC=100 the resident size of the memory engine swings between one and
// two times what it holds (issue 14: 1.5 KB live per 1 KB order, up to
// 3 KB resident). The documents are pointer-free and kept until the store
// goes, so marking them costs almost nothing and collecting more often
// than GOGC says frees none of them. TuneGC sizes the headroom on the
// rest of the heap instead: GOGC × (live − documents) / live, which keeps
// the collector's work per allocated byte what GOGC gives a heap without
// the documents.

// minGCPercent bounds the tuned percentage from below, so a heap of
// almost nothing but documents still leaves the collector some room, and
// a bulk load whose documents the last cycle's live heap does not count
// yet (the tuner reads the live heap of the last cycle and the documents
// of now) collects at most four times as often as GOGC=100. Resident size
// stays within 1.25 times the live heap at this floor.
const minGCPercent = 25

// DocBytes is the pointer-free heap the store holds: its document blocks
// (whole, their free tails included) and its record and revision chunks
// (docs/decisions/0036-memory-engine-layout.md), which the collector marks
// without scanning.
func (s *Entities) DocBytes() int64 { return s.docBytes.Load() }

// gcPercentFor is the GOGC that gives live−docs bytes base percent of
// headroom, between minGCPercent and base.
func gcPercentFor(base int, live, docs uint64) int {
	if live == 0 || base <= minGCPercent {
		return base
	}
	other := live - min(docs, live)
	return min(max(int(uint64(base)*other/live), minGCPercent), base)
}

// TuneGC sets the collector's percentage from base (the GOGC the process
// would otherwise run with) every interval, as the share of the live heap
// that is not documents of s changes; stop ends it, waits for the loop to
// return, and restores base. It changes a process-wide setting: one store
// per process tunes, and an operator's own GOGC turns it off (cmd/svc).
func (s *Entities) TuneGC(base int, every time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		cur := base
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				continue
			}
			p := gcPercentFor(base, sample[0].Value.Uint64(), uint64(max(s.docBytes.Load(), 0)))
			// Small moves are not worth a controller update.
			if p != cur && (p < cur*9/10 || p > cur*11/10 || p == base) {
				debug.SetGCPercent(p)
				cur = p
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			debug.SetGCPercent(base)
		})
	}
}
