package infer

import (
	"bytes"
	"hash/maphash"
)

// Batch checks documents one after another against a LOCKED model, each
// against the model the documents before it widened: the same answers and
// the same resulting model as calling Check on each document and keeping
// every widened model it returns, without Check's per-document cost of
// cloning the model and encoding both sides to SIMPLE_VIEW (issue 14: that
// was 83 % of svc's CPU on schema-growing batches).
//
// The batch widens one private copy of the model in place and decides
// whether a widening is visible in SIMPLE_VIEW (Check keeps only those) by
// a fingerprint of the export's nodes and entries, a walk without sorting.
// Different fingerprints prove different exports; equal fingerprints fall
// back to comparing the encoded bytes, as Check does.
type Batch struct {
	level ChangeLevel
	lim   Limits
	base  *Model
	cur   *Model      // base until the first visible widening, then private
	fp    fingerprint // of cur, valid when cur != base
	// merged lists the models of the documents merged into cur, so the
	// rare widening that turns out invisible can be taken back by
	// rebuilding cur from base.
	merged []*Model
}

// NewBatch starts a batch against m under level; m is never modified.
func (m *Model) NewBatch(level ChangeLevel, lim Limits) *Batch {
	return &Batch{level: level, lim: lim, base: m, cur: m}
}

// Check checks doc as m.Check would against the batch's current model and
// keeps the widening it brings. After an error the batch must not be used.
func (b *Batch) Check(doc []byte) error {
	if b.level == ChangeNone || b.level > ChangeStructural {
		// Strict validation never widens; an invalid level is an error.
		_, err := b.cur.Check(doc, b.level, b.lim)
		return err
	}
	if ok, err := b.cur.fits(doc, b.lim); err != nil || ok {
		return err
	}
	d, changed, err := b.cur.diff(doc, b.level, b.lim)
	if err != nil || !changed {
		return err
	}
	if b.cur == b.base {
		b.fp = b.base.fingerprint()
		b.cur = b.base.Clone()
	}
	b.cur.Merge(d)
	fp := b.cur.fingerprint()
	if fp != b.fp {
		b.fp = fp
		b.merged = append(b.merged, d)
		return nil
	}
	// Same fingerprint: compare the exports themselves against the model
	// without d (rebuilt; the merge is order-independent).
	prev := b.base.Clone()
	for _, o := range b.merged {
		prev.Merge(o)
	}
	if bytes.Equal(prev.AppendSimpleView(nil), b.cur.AppendSimpleView(nil)) {
		if len(b.merged) == 0 {
			b.cur = b.base
		} else {
			b.cur = prev
		}
		return nil
	}
	b.merged = append(b.merged, d)
	return nil
}

// Widened returns the widened model the caller must persist, or nil when
// the batch's documents left the model's SIMPLE_VIEW as it was.
func (b *Batch) Widened() *Model {
	if b.cur == b.base {
		return nil
	}
	return b.cur
}

// fingerprint is an order-independent digest of a model's SIMPLE_VIEW: the
// number of nodes and entries and the sum of a hash of each (with its node's
// path). The export is those nodes and entries sorted, and they can be read
// back from it, so models whose fingerprints differ export different bytes.
type fingerprint struct {
	nodes, entries int
	sum            uint64
}

var fingerprintSeed = maphash.MakeSeed()

// fingerprint runs the SIMPLE_VIEW encoder's walk (the one that decides the
// export's contents) and hashes its tables instead of sorting and writing
// them.
func (m *Model) fingerprint() fingerprint {
	e := encoderPool.Get().(*encoder)
	defer func() {
		if cap(e.arena) <= 4<<20 {
			encoderPool.Put(e)
		}
	}()
	e.arena, e.nodes, e.entries = e.arena[:0], e.nodes[:0], e.entries[:0]
	e.walk.v = e
	e.walk.run(m)
	f := fingerprint{nodes: len(e.nodes), entries: len(e.entries)}
	pathHash := e.hashes[:0]
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	for _, n := range e.nodes {
		p := maphash.Bytes(fingerprintSeed, e.bytesOf(n.path))
		pathHash = append(pathHash, p)
		h.Reset()
		writeUint64(&h, p)
		h.WriteByte(n.kind)
		if n.kind != nodeObject {
			h.Write(e.bytesOf(n.arrDesc))
		}
		f.sum += h.Sum64()
	}
	for _, en := range e.entries {
		h.Reset()
		writeUint64(&h, pathHash[en.node])
		if en.structural {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
		key := e.bytesOf(en.key)
		writeUint64(&h, uint64(len(key)))
		h.Write(key)
		h.Write(e.bytesOf(en.val))
		f.sum += h.Sum64()
	}
	e.hashes = pathHash
	return f
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}
