package memory

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/internal/await"
	"svc/storage"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		base       int
		live, docs uint64
		want       int
	}{
		{100, 0, 0, 100},            // nothing measured yet
		{100, 1000, 0, 100},         // no documents: GOGC as given
		{100, 1000, 700, 30},        // 30 % of the heap is not documents
		{100, 1000, 990, 25},        // floor
		{100, 1000, 5000, 25},       // documents written since the last cycle measured the heap
		{200, 1000, 500, 100},       // an operator's base scales the same way
		{20, 1000, 900, 20},         // a base at or below the floor is kept
		{100, 4 << 20, 1 << 20, 75}, // a small heap
	} {
		if got := gcPercentFor(c.base, c.live, c.docs); got != c.want {
			t.Errorf("gcPercentFor(%d, %d, %d) = %d, want %d", c.base, c.live, c.docs, got, c.want)
		}
	}
}

// TuneGC lowers the process's GC percentage once documents dominate the
// live heap, and stop restores the base.
func TestTuneGCFollowsDocuments(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	s := NewEntities()
	m := storage.ModelKey{Name: "m", Version: 1}
	doc := make([]byte, 16<<10)
	for i := range doc {
		doc[i] = 'x'
	}
	for c := 0; c < 64; c++ { // 64 × 16 × 16 KB = 16 MB of documents
		tx := &storage.Tx{Tenant: "t", ID: uuid.New()}
		for j := 0; j < 16; j++ {
			tx.Writes = append(tx.Writes, storage.Write{ID: uuid.New(), Model: m, State: "S", Data: doc})
		}
		if _, err := s.Commit(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	if s.DocBytes() < 16<<20 {
		t.Fatalf("DocBytes %d, want at least 16 MiB", s.DocBytes())
	}
	stop := s.TuneGC(100, 10*time.Millisecond)
	if !await.Poll(60*time.Second, func() bool {
		debug.FreeOSMemory() // a cycle, so the live heap is measured
		return gogc() < 100
	}) {
		stop()
		t.Fatalf("GC percent still %d with %d document bytes", gogc(), s.DocBytes())
	}
	stop()
	if p := gogc(); p != 100 {
		t.Fatalf("after stop: GC percent %d, want the base 100", p)
	}
}

// gogc reads the collector's percentage without setting it.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
