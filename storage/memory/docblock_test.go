package memory

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

// Documents packed into a partition's blocks read back as written, across
// block boundaries, for empty, small and oversized documents and updates;
// a reader appending to a returned document cannot reach its neighbour.
func TestDocBlocksKeepDocuments(t *testing.T) {
	s := NewEntities()
	ctx := context.Background()
	m := storage.ModelKey{Name: "m", Version: 1}
	doc := func(i int) []byte {
		n := []int{0, 2, 300, 1048, 5000, maxPackedDoc + 1, 70000}[i%7]
		d := bytes.Repeat([]byte{byte('a' + i%26)}, n)
		if n >= 2 {
			d[0], d[n-1] = '{', '}'
		}
		return d
	}
	want := map[[16]byte][]byte{}
	var ids [][16]byte
	for c := 0; c < 60; c++ {
		tx := &storage.Tx{Tenant: "t", ID: uuid.New()}
		for j := 0; j < c%4+1; j++ {
			id := uuid.New()
			i := c*4 + j
			tx.Writes = append(tx.Writes, storage.Write{ID: id, Model: m, State: "S", Data: doc(i)})
			want[id] = doc(i)
			ids = append(ids, id)
		}
		// The caller reuses its buffer after the commit.
		if _, err := s.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		for _, w := range tx.Writes {
			for k := range w.Data {
				w.Data[k] = 'X'
			}
		}
	}
	// Update every third entity with a new document.
	for n, id := range ids {
		if n%3 != 0 {
			continue
		}
		d := []byte(`{"updated":` + strconv.Itoa(n) + `}`)
		if _, err := s.Commit(ctx, &storage.Tx{Tenant: "t", ID: uuid.New(), Writes: []storage.Write{{ID: id, Model: m, State: "S", Data: d, ExpectVersion: 1}}}); err != nil {
			t.Fatal(err)
		}
		want[id] = d
	}
	for _, id := range ids {
		e, err := s.Get(ctx, "t", id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Data, want[id]) || e.Data == nil {
			t.Fatalf("entity %x: %d bytes %.20q, want %d bytes %.20q", id, len(e.Data), e.Data, len(want[id]), want[id])
		}
		if cap(e.Data) != len(e.Data) {
			t.Fatalf("entity %x: cap %d > len %d: an append would write into the block", id, cap(e.Data), len(e.Data))
		}
	}
}
