package streamdata

import (
	"testing"

	"svc/storage"
)

// TestMarksLookup: a page continues from the nearest bookmark at or before
// its start, skipping the rows after it; without one it skips from the
// start of the stream. Streams are kept apart by tenant, definition and
// instant.
func TestMarksLookup(t *testing.T) {
	t.Parallel()
	m := newMarks(8)
	k := markKey{tenant: "A", at: 1}
	mk := func(id byte) storage.StreamMark { var s storage.StreamMark; s.ID[0] = id; return s }
	m.store(k, 100, mk(1))
	m.store(k, 300, mk(3))
	m.store(k, 200, mk(2)) // out of order: positions stay sorted
	m.store(k, 200, mk(9)) // a position keeps its first mark
	cases := []struct {
		pos    int
		want   byte // 0: no mark
		remain int
	}{
		{0, 0, 0},
		{50, 0, 50},
		{100, 1, 0},
		{150, 1, 50},
		{200, 2, 0},
		{299, 2, 99},
		{300, 3, 0},
		{1000, 3, 700},
	}
	for _, c := range cases {
		got, skip := m.lookup(k, c.pos)
		if (got == nil) != (c.want == 0) || (got != nil && got.ID[0] != c.want) || skip != c.remain {
			t.Errorf("lookup(%d) = %v, %d; want mark %d, skip %d", c.pos, got, skip, c.want, c.remain)
		}
	}
	for _, other := range []markKey{{tenant: "B", at: 1}, {tenant: "A", at: 2}, {tenant: "A", at: 1, def: [32]byte{1}}} {
		if got, skip := m.lookup(other, 150); got != nil || skip != 150 {
			t.Errorf("lookup in stream %+v found %v, %d: streams must not share marks", other, got, skip)
		}
	}
}

// TestMarksEvictOldestStream: the cache holds at most max streams; a new
// stream evicts the oldest, whose pages then skip from the start again.
func TestMarksEvictOldestStream(t *testing.T) {
	t.Parallel()
	m := newMarks(2)
	keys := []markKey{{tenant: "a"}, {tenant: "b"}, {tenant: "c"}}
	for _, k := range keys {
		m.store(k, 10, storage.StreamMark{})
	}
	if got, skip := m.lookup(keys[0], 10); got != nil || skip != 10 {
		t.Fatalf("oldest stream still marked (%v, %d) after a third stream with max 2", got, skip)
	}
	for _, k := range keys[1:] {
		if got, skip := m.lookup(k, 10); got == nil || skip != 0 {
			t.Fatalf("stream %s lost its mark (%v, %d)", k.tenant, got, skip)
		}
	}
	if len(m.streams) != 2 || len(m.order) != 2 {
		t.Fatalf("%d streams, %d in order; want 2", len(m.streams), len(m.order))
	}
}

// TestMarksPerStreamBound: a stream keeps at most maxMarksPerStream marks;
// later ones are dropped, earlier ones still serve.
func TestMarksPerStreamBound(t *testing.T) {
	t.Parallel()
	m := newMarks(1)
	k := markKey{tenant: "A"}
	for p := 1; p <= maxMarksPerStream+10; p++ {
		m.store(k, p, storage.StreamMark{})
	}
	if n := len(m.streams[k].pos); n != maxMarksPerStream {
		t.Fatalf("%d marks kept, want %d", n, maxMarksPerStream)
	}
	if _, skip := m.lookup(k, maxMarksPerStream+10); skip != 10 {
		t.Fatalf("past the bound: skip %d, want 10 from the last kept mark", skip)
	}
}
