package memory

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"svc/storage"
)

// Entities is the in-memory storage.Entities. There is no global lock on
// the write path: an id index split into shards finds an entity's record,
// and each (tenant, model) partition has its own lock that guards its
// records' revisions, its live set and its per-state counters. A commit
// locks only the partitions it writes, in a fixed order, so writers of
// different models never wait on each other.
//
// What the store holds per entity is pointer-free (issue 25): the id
// index maps an id to a record slot (uint32) in a table of fixed-size
// chunks, a record names its latest revision by its index in its
// partition's revision table, a revision names its document by block,
// offset and length, its state, transition and user by their index in the
// partition's string table. The collector marks a chunk or a block as one
// object and scans none of it, so its work per cycle no longer grows with
// the entities held (BenchmarkIngestHeldRatio). Only what few entities
// have (explicit audit events, unique-key claims) sits in side maps that
// hold pointers.
//
// Revision documents are immutable once committed and are handed out
// without copying; callers must not modify Entity.Data.
type Entities struct {
	shards  [shardCount]idShard
	partsMu sync.RWMutex
	parts   map[partKey]*part
	// partTab lists the partitions by index (part.idx), copied on growth.
	partTab atomic.Pointer[[]*part]
	recs    recTable
	// lastNs makes commit instants strictly increasing across the store,
	// so an entity's revisions are totally ordered in time.
	lastNs atomic.Int64
	// audit holds the events of entities their transaction does not
	// write (audit.go).
	audit auditLog
	// tasks are the scheduled tasks Tx.Tasks arm and cancel (tasks.go).
	tasks taskTable
	// docBytes is the pointer-free heap the store holds: document blocks,
	// record and revision chunks (gctune.go).
	docBytes atomic.Int64
	// changes is the change feed's log (changes.go).
	changes changeLog
	// keys are the idempotency keys (idempotency.go).
	keys keyTable
}

const shardCount = 64

// idShard maps ids to record slots: neither key nor value holds a
// pointer, so the collector does not scan the map.
type idShard struct {
	mu sync.RWMutex
	m  map[[16]byte]uint32
}

type partKey struct {
	tenant string
	model  storage.ModelKey
}

func (a partKey) less(b partKey) bool {
	if a.tenant != b.tenant {
		return a.tenant < b.tenant
	}
	if a.model.Name != b.model.Name {
		return a.model.Name < b.model.Name
	}
	return a.model.Version < b.model.Version
}

// recSlot is one entity. id and part are set before the slot is published
// in the id index and never change; the rest is guarded by the lock of
// the partition. A slot with no revision is a create in flight (or one
// that failed) and is invisible.
type recSlot struct {
	id [16]byte
	// created is the commit instant of the first revision.
	created int64
	part    uint32
	// last is the index + 1 of the latest revision in the partition's
	// table; 0 while the create is in flight.
	last uint32
	nrev uint32
	// flags say whether the entity has side entries (recAudit).
	flags uint8
}

const (
	recAudit uint8 = 1 << iota
)

const (
	recChunkBits = 12
	recChunk     = 1 << recChunkBits
)

// recTable is the store's records in fixed chunks that never move; slot
// 0 is never handed out, so 0 means none.
type recTable struct {
	mu  sync.Mutex
	n   uint32
	dir atomic.Pointer[[]*[recChunk]recSlot]
}

// alloc hands out k consecutive slots and returns the first.
func (t *recTable) alloc(k int, acct *atomic.Int64) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		t.n = 1
	}
	first := t.n
	end := uint64(first) + uint64(k)
	var dir []*[recChunk]recSlot
	if d := t.dir.Load(); d != nil {
		dir = *d
	}
	if need := int((end + recChunk - 1) >> recChunkBits); need > len(dir) {
		grown := make([]*[recChunk]recSlot, len(dir), need)
		copy(grown, dir)
		for len(grown) < need {
			grown = append(grown, new([recChunk]recSlot))
			acct.Add(recChunk * int64(unsafe.Sizeof(recSlot{})))
		}
		t.dir.Store(&grown)
	}
	t.n = uint32(end)
	return first
}

// at is slot h; h was handed out by alloc.
func (t *recTable) at(h uint32) *recSlot {
	return &(*t.dir.Load())[h>>recChunkBits][h&(recChunk-1)]
}

// view is the chunk directory, for loops over many slots.
func (t *recTable) view() recView {
	if d := t.dir.Load(); d != nil {
		return *d
	}
	return nil
}

type recView []*[recChunk]recSlot

func (v recView) at(h uint32) *recSlot { return &v[h>>recChunkBits][h&(recChunk-1)] }

// revSlot is one revision, pointer-free.
type revSlot struct {
	at   int64
	txID [16]byte
	// prev is the index + 1 of the record's previous revision.
	prev uint32
	// doc is the document's block index + 1 (0: no document, noDoc-1 the
	// empty one), off and n its place in the block.
	doc, off, n uint32
	// state, transition and user index the partition's string table,
	// attr its attributions (0: none).
	state, transition, user, attr uint32
	// trio is 1 + the Seq of the START event of the create's no-engine
	// trail when that trail is implicit (audit.go, implicitTrio), else 0.
	trio   int32
	change uint8
	// own says the write carried its own attribution, not the
	// transaction's.
	own bool
}

const (
	revChunkBits = 12
	revChunk     = 1 << revChunkBits
	revSlotSize  = 64
	// emptyDocRef is revSlot.doc of an empty document.
	emptyDocRef = ^uint32(0)
)

// part is one (tenant, model) partition.
type part struct {
	key partKey
	idx uint32
	mu  sync.RWMutex
	// all lists the record slots of every entity ever created, in commit
	// order: as-at reads and current reads alike walk it.
	all []uint32
	// nLive counts the records of all whose last revision is not a delete.
	nLive int
	// states counts the live records per state (by string index).
	states []int64
	// sorted caches the live record slots in id order for paging; writers
	// that change the live set clear it under the write lock, readers
	// rebuild it under the read lock (the live set cannot change
	// meanwhile).
	sorted atomic.Pointer[[]uint32]
	// claims are the unique-key values live records hold (unique.go), by
	// owner slot; recClaims a keyed record's values. nil until the model's
	// first keyed write.
	claims    map[claimKey]uint32
	recClaims map[uint32][]claimKey
	// audit are the explicit audit events of records, in commit order
	// (audit.go); a create's implicit trail needs none.
	audit map[uint32][]memEvent
	// revs is the revision table in chunks of revChunk (the first grows
	// up to it, so a small model holds a small table).
	revs  [][]revSlot
	nrevs uint32
	// strs interns states, transitions and user names; strs[0] is "".
	strs   []string
	strIdx map[string]uint32
	// attrs are the attributions of revisions; attrs[0] is unused.
	attrs   []storage.Attribution
	attrIdx map[storage.Attribution]uint32
	// docBlocks hold the revision documents back to back (keep); docUsed
	// is how much of the last one is taken.
	docBlocks [][]byte
	docUsed   int
	// docBlock is the size of the last block, doubled up to maxDocBlock so
	// that a small model does not hold a large one.
	docBlock int
	// open is the index + 1 of the block new documents go to.
	open  int
	store *Entities
}

const (
	minDocBlock = 4 << 10
	maxDocBlock = 256 << 10
	// A document above maxPackedDoc gets a block of its own: a block
	// abandons at most this much of its tail.
	maxPackedDoc = 32 << 10
)

// emptyDoc is the stored form of an empty document (a non-nil empty slice,
// as a copy into a block gives).
var emptyDoc = []byte{}

// keep copies d into the partition's document blocks and returns where it
// went. Stored documents are immutable and never freed before the store
// is (the store keeps every revision). The caller holds p.mu for writing.
func (p *part) keep(d []byte, v *revSlot) {
	n := len(d)
	if n == 0 {
		v.doc = emptyDocRef
		return
	}
	if n > maxPackedDoc {
		p.store.docBytes.Add(int64(n))
		p.docBlocks = append(p.docBlocks, append(make([]byte, 0, n), d...))
		v.doc, v.off, v.n = uint32(len(p.docBlocks)), 0, uint32(n)
		return
	}
	if p.open == 0 || len(p.docBlocks[p.open-1])-p.docUsed < n {
		p.docBlock = min(max(2*p.docBlock, minDocBlock), maxDocBlock)
		p.docBlocks = append(p.docBlocks, make([]byte, max(p.docBlock, n)))
		p.open, p.docUsed = len(p.docBlocks), 0
		p.store.docBytes.Add(int64(max(p.docBlock, n)))
	}
	copy(p.docBlocks[p.open-1][p.docUsed:], d)
	v.doc, v.off, v.n = uint32(p.open), uint32(p.docUsed), uint32(n)
	p.docUsed += n
}

// data is v's document, capped at its length so no append can reach the
// next one; nil for a delete. The caller holds p.mu.
func (p *part) data(v *revSlot) []byte {
	switch v.doc {
	case 0:
		return nil
	case emptyDocRef:
		return emptyDoc
	}
	b := p.docBlocks[v.doc-1]
	return b[v.off : v.off+v.n : v.off+v.n]
}

// rev is revision ri (an index + 1); the caller holds p.mu.
func (p *part) rev(ri uint32) *revSlot {
	i := ri - 1
	return &p.revs[i>>revChunkBits][i&(revChunk-1)]
}

// addRev appends v to the revision table and returns its index + 1; the
// caller holds p.mu for writing.
func (p *part) addRev(v revSlot) uint32 {
	if len(p.revs) == 0 || len(p.revs[len(p.revs)-1]) == revChunk {
		c := 16
		if len(p.revs) > 0 {
			c = revChunk
		}
		p.revs = append(p.revs, make([]revSlot, 0, c))
		p.store.docBytes.Add(int64(c * revSlotSize))
	}
	last := &p.revs[len(p.revs)-1]
	if len(*last) == cap(*last) {
		old := cap(*last)
		*last = append(*last, v)
		p.store.docBytes.Add(int64((cap(*last) - old) * revSlotSize))
	} else {
		*last = append(*last, v)
	}
	p.nrevs++
	return p.nrevs
}

// intern is the index of s in the string table; the caller holds p.mu
// for writing.
func (p *part) intern(s string) uint32 {
	if s == "" {
		return 0
	}
	// States and transitions are few: a short scan beats hashing.
	for i := 1; i < len(p.strs) && i < 9; i++ {
		if p.strs[i] == s {
			return uint32(i)
		}
	}
	if i, ok := p.strIdx[s]; ok {
		return i
	}
	if p.strIdx == nil {
		p.strIdx = map[string]uint32{}
	}
	p.strs = append(p.strs, s)
	i := uint32(len(p.strs) - 1)
	p.strIdx[s] = i
	return i
}

// attrOf is the index of a's attribution (0 for nil); the caller holds
// p.mu for writing.
func (p *part) attrOf(a *storage.Attribution) uint32 {
	if a == nil {
		return 0
	}
	if i, ok := p.attrIdx[*a]; ok {
		return i
	}
	if p.attrIdx == nil {
		p.attrIdx = map[storage.Attribution]uint32{}
		p.attrs = append(p.attrs, storage.Attribution{})
	}
	p.attrs = append(p.attrs, *a)
	i := uint32(len(p.attrs) - 1)
	p.attrIdx[*a] = i
	return i
}

const (
	chCreated uint8 = iota
	chUpdated
	chDeleted
)

var changeNames = [...]string{storage.ChangeCreated, storage.ChangeUpdated, storage.ChangeDeleted}

func NewEntities() *Entities {
	e := &Entities{parts: map[partKey]*part{}}
	for i := range e.shards {
		e.shards[i].m = map[[16]byte]uint32{}
	}
	return e
}

func (s *Entities) shard(id [16]byte) *idShard {
	// Time-based ids vary most in their first bytes (v1) or last bytes
	// (v7); mixing both spreads either kind.
	return &s.shards[(id[0]^id[15]^id[3])%shardCount]
}

// wrec is a record as an operation holds it: its slot, the slot's place
// and its partition.
type wrec struct {
	h uint32
	r *recSlot
	p *part
}

func (s *Entities) partAt(i uint32) *part { return (*s.partTab.Load())[i] }

func (s *Entities) lookup(tenant string, id [16]byte) (wrec, bool) {
	sh := s.shard(id)
	sh.mu.RLock()
	h := sh.m[id]
	sh.mu.RUnlock()
	if h == 0 {
		return wrec{}, false
	}
	r := s.recs.at(h)
	p := s.partAt(r.part)
	if p.key.tenant != tenant {
		return wrec{}, false
	}
	return wrec{h, r, p}, true
}

func (s *Entities) partFor(k partKey, create bool) *part {
	s.partsMu.RLock()
	p := s.parts[k]
	s.partsMu.RUnlock()
	if p != nil || !create {
		return p
	}
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	if p = s.parts[k]; p == nil {
		var tab []*part
		if t := s.partTab.Load(); t != nil {
			tab = *t
		}
		p = &part{key: k, idx: uint32(len(tab)), strs: []string{""}, store: s}
		grown := append(tab[:len(tab):len(tab)], p)
		s.partTab.Store(&grown)
		s.parts[k] = p
	}
	return p
}

func (s *Entities) now() int64 {
	for {
		last := s.lastNs.Load()
		t := time.Now().UnixNano()
		if t <= last {
			t = last + 1
		}
		if s.lastNs.CompareAndSwap(last, t) {
			return t
		}
	}
}

func (s *Entities) Commit(ctx context.Context, tx *storage.Tx) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	// Small transactions (a single create) keep their bookkeeping on the
	// stack.
	var recsBuf [4]wrec
	var insertedBuf [4]uint32
	var partsBuf [4]*part
	inserted := insertedBuf[:0]
	var recs []wrec
	if len(tx.Writes) > len(recsBuf) {
		recs = make([]wrec, len(tx.Writes))
	} else {
		recs = recsBuf[:len(tx.Writes)]
	}
	undo := func() {
		for _, h := range inserted {
			id := s.recs.at(h).id
			sh := s.shard(id)
			sh.mu.Lock()
			if sh.m[id] == h {
				delete(sh.m, id)
			}
			sh.mu.Unlock()
		}
	}
	// Resolve records; creates reserve their id with an invisible record
	// (a slot without revisions; a failed commit leaves it unused).
	parts := partsBuf[:0]
	var next uint32
	if n := countCreates(tx); n > 0 {
		next = s.recs.alloc(n, &s.docBytes)
	}
	for i := range tx.Writes {
		w := &tx.Writes[i]
		if w.Delete && w.ExpectVersion == 0 {
			undo()
			return time.Time{}, storage.ErrNotFound
		}
		if w.ExpectVersion == 0 {
			p := s.partFor(partKey{tx.Tenant, w.Model}, true)
			h := next
			next++
			r := s.recs.at(h)
			*r = recSlot{id: w.ID, part: p.idx}
			sh := s.shard(w.ID)
			sh.mu.Lock()
			_, taken := sh.m[w.ID]
			if !taken {
				sh.m[w.ID] = h
			}
			sh.mu.Unlock()
			if taken {
				undo()
				return time.Time{}, storage.ErrExists
			}
			inserted = append(inserted, h)
			recs[i] = wrec{h, r, p}
		} else {
			wr, ok := s.lookup(tx.Tenant, w.ID)
			if !ok {
				undo()
				return time.Time{}, storage.ErrNotFound
			}
			recs[i] = wr
		}
		parts = appendPart(parts, recs[i].p)
	}
	if err := storage.Fault(ctx, "reserved"); err != nil {
		undo()
		return time.Time{}, err
	}
	// Lock order (insertion sort: a transaction touches a few partitions,
	// and sort.Slice would allocate).
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && parts[j].key.less(parts[j-1].key); j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	for _, p := range parts {
		p.mu.Lock()
	}
	unlock := func() {
		for _, p := range parts {
			p.mu.Unlock()
		}
	}
	// Validate everything before changing anything.
	for i := range tx.Writes {
		w, r := &tx.Writes[i], recs[i]
		if int64(r.r.nrev) != w.ExpectVersion {
			unlock()
			undo()
			return time.Time{}, storage.ErrConflict
		}
		if w.ExpectVersion > 0 && r.p.rev(r.r.last).change == chDeleted {
			unlock()
			undo()
			return time.Time{}, storage.ErrConflict
		}
	}
	if len(tx.Tasks) > 0 {
		s.tasks.mu.Lock()
		if !s.tasks.checkTasks(tx) {
			s.tasks.mu.Unlock()
			unlock()
			undo()
			return time.Time{}, storage.ErrConflict
		}
		inner := unlock
		unlock = func() {
			s.tasks.mu.Unlock()
			inner()
		}
	}
	if tx.Idempotency != nil {
		s.keys.mu.Lock()
		if !s.keys.checkStamp(tx) {
			s.keys.mu.Unlock()
			unlock()
			undo()
			return time.Time{}, storage.ErrConflict
		}
		inner := unlock
		unlock = func() {
			s.keys.mu.Unlock()
			inner()
		}
	}
	keyed := storage.TouchesClaims(tx)
	if keyed {
		if err := checkClaims(tx, recs); err != nil {
			unlock()
			undo()
			return time.Time{}, err
		}
	}
	if err := storage.Fault(ctx, "validated"); err != nil {
		unlock()
		undo()
		return time.Time{}, err
	}
	if len(tx.Changes) > 0 {
		fillChanges(tx, recs)
	}
	// Documents are copied into the partition's blocks (part.keep):
	// callers reuse their buffers (fasthttp request bodies).
	at := s.now()
	for i := range tx.Writes {
		w, wr := &tx.Writes[i], recs[i]
		p, r := wr.p, wr.r
		attr := tx.Attribution
		if w.Attribution != nil {
			// A joined write keeps its own attribution (executedBy the member).
			attr = w.Attribution
		}
		nr := revSlot{at: at, txID: tx.ID, prev: r.last, state: p.intern(w.State), transition: p.intern(w.Transition),
			user: p.intern(tx.User), attr: p.attrOf(attr), change: chUpdated, own: w.Attribution != nil}
		if r.nrev > 0 {
			last := p.rev(r.last)
			p.states[last.state]--
			if w.Delete {
				nr.change, nr.state = chDeleted, last.state
			}
		} else {
			p.all = append(p.all, wr.h)
			r.created = at
		}
		switch {
		case w.Delete:
		case w.ExpectVersion == 0:
			nr.change = chCreated
			p.keep(w.Data, &nr)
		default:
			p.keep(w.Data, &nr)
		}
		r.last = p.addRev(nr)
		r.nrev++
		if w.Delete {
			p.nLive--
			p.sorted.Store(nil)
		} else {
			if r.nrev == 1 {
				p.nLive++
				p.sorted.Store(nil)
			}
			for int(nr.state) >= len(p.states) {
				p.states = append(p.states, 0)
			}
			p.states[nr.state]++
		}
	}
	if keyed {
		applyClaims(tx, recs)
	}
	s.appendAudit(tx, recs, at)
	if len(tx.Changes) > 0 {
		s.changes.append(tx, at)
	}
	if len(tx.Tasks) > 0 {
		s.tasks.applyTasks(tx)
	}
	if tx.Idempotency != nil {
		s.keys.applyStamp(tx)
	}
	unlock()
	return time.Unix(0, at).UTC(), nil
}

func countCreates(tx *storage.Tx) int {
	n := 0
	for i := range tx.Writes {
		if tx.Writes[i].ExpectVersion == 0 && !tx.Writes[i].Delete {
			n++
		}
	}
	return n
}

func appendPart(ps []*part, p *part) []*part {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

// entity is revision ri of r, its version ver; the caller holds p.mu.
func (p *part) entity(r *recSlot, ri uint32, ver int) *storage.Entity {
	v := p.rev(ri)
	var e *storage.Entity
	var a *storage.Attribution
	if v.attr == 0 {
		e = new(storage.Entity)
	} else {
		// The caller's copy of the attribution shares the entity's
		// allocation: one allocation per read, not two (issue 25).
		ea := new(entityAttr)
		ea.a = p.attrs[v.attr]
		e, a = &ea.e, &ea.a
	}
	*e = storage.Entity{
		Tenant: p.key.tenant, ID: r.id, Model: p.key.model, State: p.strs[v.state], Data: p.data(v),
		Version: int64(ver), CreatedAt: time.Unix(0, r.created).UTC(), UpdatedAt: time.Unix(0, v.at).UTC(),
		TxID: v.txID, Transition: p.strs[v.transition], ChangeType: changeNames[v.change], User: p.strs[v.user],
		Deleted: v.change == chDeleted, Attribution: a,
	}
	return e
}

// entityAttr is an entity read and its attribution's copy, allocated
// together.
type entityAttr struct {
	e storage.Entity
	a storage.Attribution
}

// live says whether r's last revision is not a delete; the caller holds
// its partition's lock.
func (p *part) live(r *recSlot) bool {
	return r.last != 0 && p.rev(r.last).change != chDeleted
}

// liveAt is the revision of r live at ns and its version, or 0.
func (p *part) liveAt(r *recSlot, ns int64) (uint32, int) {
	ver := int(r.nrev)
	for ri := r.last; ri != 0; ver-- {
		v := p.rev(ri)
		if v.at <= ns {
			if v.change == chDeleted {
				return 0, 0
			}
			return ri, ver
		}
		ri = v.prev
	}
	return 0, 0
}

// first is r's first revision; the caller holds p.mu.
func (p *part) first(r *recSlot) uint32 {
	ri := r.last
	for ri != 0 {
		prev := p.rev(ri).prev
		if prev == 0 {
			return ri
		}
		ri = prev
	}
	return 0
}

func (s *Entities) Get(_ context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	wr, ok := s.lookup(tenant, id)
	if !ok {
		return nil, storage.ErrNotFound
	}
	p, r := wr.p, wr.r
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.live(r) {
		return nil, storage.ErrNotFound
	}
	return p.entity(r, r.last, int(r.nrev)), nil
}

func (s *Entities) GetAt(_ context.Context, tenant string, id [16]byte, at time.Time) (*storage.Entity, error) {
	wr, ok := s.lookup(tenant, id)
	if !ok {
		return nil, storage.ErrNotFound
	}
	p, r := wr.p, wr.r
	p.mu.RLock()
	defer p.mu.RUnlock()
	ri, ver := p.liveAt(r, at.UnixNano())
	if ri == 0 {
		return nil, storage.ErrNotFound
	}
	return p.entity(r, ri, ver), nil
}

func (s *Entities) GetByTx(_ context.Context, tenant string, id, txID [16]byte) (*storage.Entity, error) {
	wr, ok := s.lookup(tenant, id)
	if !ok {
		return nil, storage.ErrNotFound
	}
	p, r := wr.p, wr.r
	p.mu.RLock()
	defer p.mu.RUnlock()
	ver := int(r.nrev)
	for ri := r.last; ri != 0; ver-- {
		v := p.rev(ri)
		if v.txID == txID && v.change != chDeleted {
			return p.entity(r, ri, ver), nil
		}
		ri = v.prev
	}
	return nil, storage.ErrNotFound
}

func (s *Entities) History(_ context.Context, tenant string, id [16]byte) ([]storage.Entity, error) {
	wr, ok := s.lookup(tenant, id)
	if !ok {
		return nil, storage.ErrNotFound
	}
	p, r := wr.p, wr.r
	p.mu.RLock()
	defer p.mu.RUnlock()
	if r.nrev == 0 {
		return nil, storage.ErrNotFound
	}
	out := make([]storage.Entity, r.nrev)
	ver := int(r.nrev)
	for ri := r.last; ri != 0; ver-- {
		out[ver-1] = *p.entity(r, ri, ver)
		out[ver-1].Data = nil
		ri = p.rev(ri).prev
	}
	return out, nil
}

// snap is a record and the revision of it a read sees.
type snap struct {
	r   *recSlot
	ri  uint32
	ver int
}

// snapshot returns the records of a model live at at (or now) with their
// live revision; the caller holds p.mu.
func (p *part) snapshot(at *time.Time) []snap {
	recs := p.store.recs.view()
	if at == nil {
		out := make([]snap, 0, p.nLive)
		for _, h := range p.all {
			if r := recs.at(h); p.live(r) {
				out = append(out, snap{r, r.last, int(r.nrev)})
			}
		}
		return out
	}
	ns := at.UnixNano()
	var out []snap
	for _, h := range p.all {
		r := recs.at(h)
		if ri, ver := p.liveAt(r, ns); ri != 0 {
			out = append(out, snap{r, ri, ver})
		}
	}
	return out
}

func (s *Entities) List(_ context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil || limit <= 0 {
		return []*storage.Entity{}, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	recs := s.recs.view()
	if at == nil {
		// Current pages come from the cached id order: paging a large
		// model does not sort it again for every page.
		hs := p.liveSorted()
		if offset >= len(hs) {
			return []*storage.Entity{}, nil
		}
		hs = hs[offset:min(len(hs), offset+limit)]
		out := make([]*storage.Entity, len(hs))
		for i, h := range hs {
			r := recs.at(h)
			out[i] = p.entity(r, r.last, int(r.nrev))
		}
		return out, nil
	}
	ss := p.snapshot(at)
	sort.Slice(ss, func(a, b int) bool { return bytes.Compare(ss[a].r.id[:], ss[b].r.id[:]) < 0 })
	if offset >= len(ss) {
		return []*storage.Entity{}, nil
	}
	ss = ss[offset:]
	if len(ss) > limit {
		ss = ss[:limit]
	}
	out := make([]*storage.Entity, len(ss))
	for i, x := range ss {
		out[i] = p.entity(x.r, x.ri, x.ver)
	}
	return out, nil
}

// liveSorted returns the live record slots in id order; the caller holds
// the read lock.
func (p *part) liveSorted() []uint32 {
	if c := p.sorted.Load(); c != nil {
		return *c
	}
	recs := p.store.recs.view()
	hs := make([]uint32, 0, p.nLive)
	for _, h := range p.all {
		if p.live(recs.at(h)) {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(a, b int) bool { return bytes.Compare(recs.at(hs[a]).id[:], recs.at(hs[b]).id[:]) < 0 })
	p.sorted.Store(&hs)
	return hs
}

func (s *Entities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil {
		return nil
	}
	p.mu.RLock()
	ss := p.snapshot(at)
	ents := make([]*storage.Entity, len(ss))
	for i, x := range ss {
		ents[i] = p.entity(x.r, x.ri, x.ver)
	}
	p.mu.RUnlock()
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (s *Entities) DeleteModel(ctx context.Context, tenant string, model storage.ModelKey, txID [16]byte, user string, changes *storage.ModelDeleteChanges) (int64, time.Time, error) {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil {
		return 0, time.Now().UTC(), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := storage.Fault(ctx, "validated"); err != nil {
		return 0, time.Time{}, err
	}
	at := s.now()
	n := int64(p.nLive)
	dels := newDeleteEvents(txID, user, at)
	u := p.intern(user)
	recs := s.recs.view()
	var ch *storage.Tx
	if changes != nil {
		ch = &storage.Tx{Tenant: tenant, ID: txID}
	}
	for _, h := range p.all {
		r := recs.at(h)
		if !p.live(r) {
			continue
		}
		last := p.rev(r.last)
		st := last.state
		if ch != nil {
			c := storage.Change{EntityID: r.id, Model: model, Kind: storage.KindDelete, FromState: p.strs[st], ToState: p.strs[st]}
			if changes.WantBefore {
				c.BodyBefore = append([]byte(nil), p.data(last)...)
			}
			ch.Changes = append(ch.Changes, c)
		}
		r.last = p.addRev(revSlot{at: at, txID: txID, prev: r.last, state: st, user: u, change: chDeleted})
		r.nrev++
		if p.audit == nil {
			p.audit = map[uint32][]memEvent{}
		}
		p.audit[h] = append(p.audit[h], dels.event(p.strs[st]))
		r.flags |= recAudit
	}
	p.nLive = 0
	p.claims, p.recClaims = nil, nil
	clear(p.states)
	p.sorted.Store(nil)
	if ch != nil && len(ch.Changes) > 0 {
		s.changes.append(ch, at)
	}
	return n, time.Unix(0, at).UTC(), nil
}

func (s *Entities) Count(_ context.Context, tenant string, model storage.ModelKey) (int64, error) {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil {
		return 0, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return int64(p.nLive), nil
}

func (s *Entities) CountByState(_ context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]storage.StateCount, error) {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil {
		return nil, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	counts := make([]int64, len(p.strs))
	if at == nil {
		copy(counts, p.states)
	} else {
		for _, x := range p.snapshot(at) {
			counts[p.rev(x.ri).state]++
		}
	}
	var out []storage.StateCount
	for st, n := range counts {
		if n > 0 {
			out = append(out, storage.StateCount{Model: model, State: p.strs[st], Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].State < out[j].State })
	return out, nil
}
