package infer

import (
	"bytes"
	"fmt"
	"testing"

	"svc/bench/orderdoc"
)

// checkEach is what Batch must equal: Check on each document in turn,
// keeping every widened model it returns.
func checkEach(m *Model, docs [][]byte, level ChangeLevel) (*Model, int, error) {
	cur := m
	for i, d := range docs {
		w, err := cur.Check(d, level, Limits{})
		if err != nil {
			return nil, i, err
		}
		if w != nil {
			cur = w
		}
	}
	if cur == m {
		return nil, len(docs), nil
	}
	return cur, len(docs), nil
}

func checkBatch(m *Model, docs [][]byte, level ChangeLevel) (*Model, int, error) {
	b := m.NewBatch(level, Limits{})
	for i, d := range docs {
		if err := b.Check(d); err != nil {
			return nil, i, err
		}
	}
	return b.Widened(), len(docs), nil
}

func sameOutcome(t *testing.T, name string, m *Model, docs [][]byte, level ChangeLevel) {
	t.Helper()
	before := m.AppendSimpleView(nil)
	we, ie, ee := checkEach(m, docs, level)
	wb, ib, eb := checkBatch(m, docs, level)
	if !bytes.Equal(m.AppendSimpleView(nil), before) {
		t.Fatalf("%s: the batch modified its base model", name)
	}
	if ie != ib || fmt.Sprint(ee) != fmt.Sprint(eb) {
		t.Fatalf("%s: Check each stopped at %d with %v, Batch at %d with %v", name, ie, ee, ib, eb)
	}
	if (we == nil) != (wb == nil) {
		t.Fatalf("%s: Check each widened=%v, Batch widened=%v", name, we != nil, wb != nil)
	}
	if we != nil {
		if a, b := we.AppendSimpleView(nil), wb.AppendSimpleView(nil); !bytes.Equal(a, b) {
			t.Fatalf("%s: widened models differ:\ncheck each %s\nbatch      %s", name, a, b)
		}
	}
}

// TestBatchMatchesCheckEach: random documents of every shape, batches of
// them against random models at every change level, give the same error
// (or none) at the same document and the same widened SIMPLE_VIEW as Check
// applied document by document.
func TestBatchMatchesCheckEach(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	for seed := int64(0); seed < int64(n); seed++ {
		g := newDocGen(seed)
		m := NewModel()
		for i := 0; i < int(seed%4); i++ {
			if err := m.Ingest([]byte(g.doc()), Limits{}); err != nil {
				t.Fatal(err)
			}
		}
		docs := make([][]byte, 1+seed%12)
		for i := range docs {
			docs[i] = []byte(g.doc())
		}
		for _, level := range []ChangeLevel{ChangeNone, ChangeArrayLength, ChangeArrayElements, ChangeType, ChangeStructural} {
			sameOutcome(t, fmt.Sprintf("seed %d level %s", seed, level), m, docs, level)
		}
	}
}

// TestBatchInvisibleWidening: documents whose changes SIMPLE_VIEW cannot
// carry (an empty object in a new field, then null there) are dropped as
// Check drops them, also between visible ones.
func TestBatchInvisibleWidening(t *testing.T) {
	m := NewModel()
	if err := m.Ingest([]byte(`{"a":1}`), Limits{}); err != nil {
		t.Fatal(err)
	}
	docs := [][]byte{
		[]byte(`{"a":1,"e":{}}`),
		[]byte(`{"a":1,"b":"x"}`),
		[]byte(`{"a":1,"e":null}`),
		[]byte(`{"a":1,"f":{}}`),
		[]byte(`{"a":1,"f":{"g":true}}`),
	}
	sameOutcome(t, "invisible", m, docs, ChangeStructural)
	sameOutcome(t, "invisible only", m, docs[:1], ChangeStructural)
	if w, _, _ := checkBatch(m, docs[:1], ChangeStructural); w != nil {
		t.Fatalf("an empty object widened the model: %s", w.AppendSimpleView(nil))
	}
	w, _, _ := checkBatch(m, docs, ChangeStructural)
	if got, want := string(w.AppendSimpleView(nil)), `{"$":{".a":"INTEGER",".b":"STRING",".e":"NULL",".f.g":"BOOLEAN"}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestBatchVariedOrders: the order-varied load's batches, against a model
// that has seen every earlier order.
func TestBatchVariedOrders(t *testing.T) {
	m := NewModel()
	for first := 0; first < 2400; first += 100 {
		docs := make([][]byte, 100)
		for i := range docs {
			docs[i] = orderdoc.AppendVaried(nil, first+i)
		}
		sameOutcome(t, fmt.Sprintf("orders %d..", first), m, docs, ChangeStructural)
		w, _, err := checkBatch(m, docs, ChangeStructural)
		if err != nil {
			t.Fatal(err)
		}
		if w != nil {
			m = w
		}
	}
}
