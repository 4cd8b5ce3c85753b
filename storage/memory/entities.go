package memory

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"svc/storage"
)

// Entities is the in-memory storage.Entities. There is no global lock on
// the write path: an id index split into shards finds an entity's record,
// and each (tenant, model) partition has its own lock that guards its
// records' revisions, its live set and its per-state counters. A commit
// locks only the partitions it writes, in a fixed order, so writers of
// different models never wait on each other.
//
// Revision documents are immutable once committed and are handed out
// without copying; callers must not modify Entity.Data.
type Entities struct {
	shards  [shardCount]idShard
	partsMu sync.RWMutex
	parts   map[partKey]*part
	// lastNs makes commit instants strictly increasing across the store,
	// so an entity's revisions are totally ordered in time.
	lastNs atomic.Int64
	// audit holds the events of entities their transaction does not
	// write (audit.go).
	audit auditLog
	// tasks are the scheduled tasks Tx.Tasks arm and cancel (tasks.go).
	tasks taskTable
	// docBytes is the heap the stored documents take (gctune.go).
	docBytes atomic.Int64
	// changes is the change feed's log (changes.go).
	changes changeLog
	// keys are the idempotency keys (idempotency.go).
	keys keyTable
}

const shardCount = 64

type idShard struct {
	mu sync.RWMutex
	m  map[[16]byte]*rec
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

// part is one (tenant, model) partition.
type part struct {
	key partKey
	mu  sync.RWMutex
	// all lists every entity ever created, in commit order: as-at reads
	// and current reads alike walk it (rec.live). A slice, not a map: it
	// is only appended to and iterated. A map of the live records beside
	// it cost every create a second hash insert (a cache miss on large
	// models: 10% of the order-collection CPU profile) and ~40 bytes, and
	// was slower to walk than the slice.
	all []*rec
	// nLive counts the records of all whose last revision is not a delete.
	nLive  int
	states map[string]int64
	// sorted caches the live records in id order for paging; writers that
	// change the live set clear it under the write lock, readers rebuild it
	// under the read lock (the live set cannot change meanwhile).
	sorted atomic.Pointer[[]*rec]
	// claims are the unique-key values live records hold (unique.go);
	// nil until the model's first keyed write.
	claims map[claimKey]*rec
	// docs is the free tail of the partition's current document block
	// (keep): revision documents are packed back to back instead of one
	// allocation each, so a 1,048-byte order costs 1,048 bytes, not its
	// 1,152-byte size class, and a create no allocation of its own.
	docs []byte
	// docBlock is the size of the last block, doubled up to maxDocBlock so
	// that a small model does not hold a large one.
	docBlock int
	store    *Entities
}

const (
	minDocBlock = 4 << 10
	maxDocBlock = 256 << 10
	// A document above maxPackedDoc gets its own allocation: a block
	// abandons at most this much of its tail.
	maxPackedDoc = 32 << 10
)

// emptyDoc is the stored form of an empty document (a non-nil empty slice,
// as a copy into a block gives).
var emptyDoc = []byte{}

// keep copies d into the partition's document block and returns the copy,
// capped at its length so no later append can reach the next document.
// Stored documents are immutable and never freed before the store is (the
// store keeps every revision), so a block outliving some of its documents
// costs nothing. The caller holds p.mu for writing.
func (p *part) keep(d []byte) []byte {
	n := len(d)
	if n == 0 {
		return emptyDoc
	}
	if n > maxPackedDoc {
		p.store.docBytes.Add(int64(n))
		return append(make([]byte, 0, n), d...)
	}
	if cap(p.docs)-len(p.docs) < n {
		p.docBlock = min(max(2*p.docBlock, minDocBlock), maxDocBlock)
		p.docs = make([]byte, 0, max(p.docBlock, n))
		p.store.docBytes.Add(int64(cap(p.docs)))
	}
	start := len(p.docs)
	p.docs = append(p.docs, d...)
	out := p.docs[start:len(p.docs):len(p.docs)]
	p.docs = p.docs[len(p.docs):]
	return out
}

// rec is one entity; revs is guarded by its partition's lock. A rec with no
// revisions is a create in flight and is invisible.
type rec struct {
	id   [16]byte
	part *part
	revs []rev
	// audit are the entity's audit events in commit order (audit.go).
	audit []memEvent
	// claims are the unique-key values the entity holds (unique.go).
	claims []claimKey
}

type rev struct {
	data       []byte
	state      string
	transition string
	// tx is the writing transaction's id, user and attribution, shared by
	// its revisions and audit events: 80 bytes a revision, not 112.
	tx     *memTx
	at     int64
	change uint8
	// trio is 1 + the Seq of the START event of the create's no-engine
	// trail when that trail is implicit (audit.go, implicitTrio), else 0.
	// It fits the padding after change: the revision stays 80 bytes.
	trio int32
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
		e.shards[i].m = map[[16]byte]*rec{}
	}
	return e
}

func (s *Entities) shard(id [16]byte) *idShard {
	// Time-based ids vary most in their first bytes (v1) or last bytes
	// (v7); mixing both spreads either kind.
	return &s.shards[(id[0]^id[15]^id[3])%shardCount]
}

func (s *Entities) lookup(tenant string, id [16]byte) *rec {
	sh := s.shard(id)
	sh.mu.RLock()
	r := sh.m[id]
	sh.mu.RUnlock()
	if r == nil || r.part.key.tenant != tenant {
		return nil
	}
	return r
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
		p = &part{key: k, states: map[string]int64{}, store: s}
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
	var recsBuf, insertedBuf [4]*rec
	var partsBuf [4]*part
	inserted := insertedBuf[:0]
	var recs []*rec
	if len(tx.Writes) > len(recsBuf) {
		recs = make([]*rec, len(tx.Writes))
	} else {
		recs = recsBuf[:len(tx.Writes)]
	}
	undo := func() {
		for _, r := range inserted {
			sh := s.shard(r.id)
			sh.mu.Lock()
			if sh.m[r.id] == r {
				delete(sh.m, r.id)
			}
			sh.mu.Unlock()
		}
	}
	// Resolve records; creates reserve their id with an invisible record.
	// The records and first revisions of a transaction's creates come in
	// one block each: a collection of 1,000 allocates 2 blocks, not 2,000
	// objects, and every record lives as long as the store anyway.
	var (
		parts    = partsBuf[:0]
		recBlock []rec
		revBlock []rev
	)
	if n := countCreates(tx); n > 0 {
		recBlock, revBlock = make([]rec, n), make([]rev, n)
	}
	for i := range tx.Writes {
		w := &tx.Writes[i]
		if w.Delete && w.ExpectVersion == 0 {
			undo()
			return time.Time{}, storage.ErrNotFound
		}
		if w.ExpectVersion == 0 {
			p := s.partFor(partKey{tx.Tenant, w.Model}, true)
			r := &recBlock[0]
			recBlock = recBlock[1:]
			*r = rec{id: w.ID, part: p, revs: revBlock[0:0:1]}
			revBlock = revBlock[1:]
			sh := s.shard(w.ID)
			sh.mu.Lock()
			_, taken := sh.m[w.ID]
			if !taken {
				sh.m[w.ID] = r
			}
			sh.mu.Unlock()
			if taken {
				undo()
				return time.Time{}, storage.ErrExists
			}
			inserted = append(inserted, r)
			recs[i] = r
		} else {
			r := s.lookup(tx.Tenant, w.ID)
			if r == nil {
				undo()
				return time.Time{}, storage.ErrNotFound
			}
			recs[i] = r
		}
		parts = appendPart(parts, recs[i].part)
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
		if int64(len(r.revs)) != w.ExpectVersion {
			unlock()
			undo()
			return time.Time{}, storage.ErrConflict
		}
		if w.ExpectVersion > 0 && r.revs[len(r.revs)-1].change == chDeleted {
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
	// Documents are copied into the partition's block (part.keep):
	// callers reuse their buffers (fasthttp request bodies).
	at := s.now()
	mt := &memTx{id: tx.ID, user: tx.User, attr: tx.Attribution}
	for i := range tx.Writes {
		w, r := &tx.Writes[i], recs[i]
		p := r.part
		wt := mt
		if w.Attribution != nil {
			// A joined write keeps its own attribution (executedBy the member).
			wt = &memTx{id: tx.ID, user: tx.User, attr: w.Attribution}
		}
		nr := rev{state: w.State, transition: w.Transition, tx: wt, at: at, change: chUpdated}
		switch {
		case w.Delete:
			nr.change, nr.state = chDeleted, r.revs[len(r.revs)-1].state
		case w.ExpectVersion == 0:
			nr.change = chCreated
			nr.data = p.keep(w.Data)
		default:
			nr.data = p.keep(w.Data)
		}
		if len(r.revs) > 0 {
			p.states[r.revs[len(r.revs)-1].state]--
		} else {
			p.all = append(p.all, r)
		}
		r.revs = append(r.revs, nr)
		if w.Delete {
			p.nLive--
			p.sorted.Store(nil)
		} else {
			if len(r.revs) == 1 {
				p.nLive++
				p.sorted.Store(nil)
			}
			p.states[nr.state]++
		}
	}
	if keyed {
		applyClaims(tx, recs)
	}
	s.appendAudit(tx, mt, recs, at)
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

func (r *rec) entity(i int) *storage.Entity {
	v := &r.revs[i]
	return &storage.Entity{
		Tenant: r.part.key.tenant, ID: r.id, Model: r.part.key.model, State: v.state, Data: v.data,
		Version: int64(i + 1), CreatedAt: time.Unix(0, r.revs[0].at).UTC(), UpdatedAt: time.Unix(0, v.at).UTC(),
		TxID: v.tx.id, Transition: v.transition, ChangeType: changeNames[v.change], User: v.tx.user,
		Deleted: v.change == chDeleted, Attribution: v.tx.attr,
	}
}

// live says whether r's last revision is not a delete (a record in p.all
// has at least one revision); the caller holds its partition's lock.
func (r *rec) live() bool {
	n := len(r.revs)
	return n > 0 && r.revs[n-1].change != chDeleted
}

// liveAt is the index of the revision live at ns, or -1.
func (r *rec) liveAt(ns int64) int {
	i := sort.Search(len(r.revs), func(i int) bool { return r.revs[i].at > ns }) - 1
	if i < 0 || r.revs[i].change == chDeleted {
		return -1
	}
	return i
}

func (s *Entities) Get(_ context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	r := s.lookup(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	r.part.mu.RLock()
	defer r.part.mu.RUnlock()
	n := len(r.revs)
	if n == 0 || r.revs[n-1].change == chDeleted {
		return nil, storage.ErrNotFound
	}
	return r.entity(n - 1), nil
}

func (s *Entities) GetAt(_ context.Context, tenant string, id [16]byte, at time.Time) (*storage.Entity, error) {
	r := s.lookup(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	r.part.mu.RLock()
	defer r.part.mu.RUnlock()
	i := r.liveAt(at.UnixNano())
	if i < 0 {
		return nil, storage.ErrNotFound
	}
	return r.entity(i), nil
}

func (s *Entities) GetByTx(_ context.Context, tenant string, id, txID [16]byte) (*storage.Entity, error) {
	r := s.lookup(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	r.part.mu.RLock()
	defer r.part.mu.RUnlock()
	for i := len(r.revs) - 1; i >= 0; i-- {
		if r.revs[i].tx.id == txID && r.revs[i].change != chDeleted {
			return r.entity(i), nil
		}
	}
	return nil, storage.ErrNotFound
}

func (s *Entities) History(_ context.Context, tenant string, id [16]byte) ([]storage.Entity, error) {
	r := s.lookup(tenant, id)
	if r == nil {
		return nil, storage.ErrNotFound
	}
	r.part.mu.RLock()
	defer r.part.mu.RUnlock()
	if len(r.revs) == 0 {
		return nil, storage.ErrNotFound
	}
	out := make([]storage.Entity, len(r.revs))
	for i := range r.revs {
		out[i] = *r.entity(i)
		out[i].Data = nil
	}
	return out, nil
}

// snapshot returns the records of a model live at at (or now) with the
// index of their live revision.
func (p *part) snapshot(at *time.Time) ([]*rec, []int) {
	var rs []*rec
	var idx []int
	if at == nil {
		rs = make([]*rec, 0, p.nLive)
		idx = make([]int, 0, p.nLive)
		for _, r := range p.all {
			if r.live() {
				rs = append(rs, r)
				idx = append(idx, len(r.revs)-1)
			}
		}
		return rs, idx
	}
	ns := at.UnixNano()
	for _, r := range p.all {
		if i := r.liveAt(ns); i >= 0 {
			rs = append(rs, r)
			idx = append(idx, i)
		}
	}
	return rs, idx
}

func (s *Entities) List(_ context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil || limit <= 0 {
		return []*storage.Entity{}, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if at == nil {
		// Current pages come from the cached id order: paging a large
		// model does not sort it again for every page.
		rs := p.liveSorted()
		if offset >= len(rs) {
			return []*storage.Entity{}, nil
		}
		rs = rs[offset:min(len(rs), offset+limit)]
		out := make([]*storage.Entity, len(rs))
		for i, r := range rs {
			out[i] = r.entity(len(r.revs) - 1)
		}
		return out, nil
	}
	rs, idx := p.snapshot(at)
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return bytes.Compare(rs[order[a]].id[:], rs[order[b]].id[:]) < 0 })
	if offset >= len(order) {
		return []*storage.Entity{}, nil
	}
	order = order[offset:]
	if len(order) > limit {
		order = order[:limit]
	}
	out := make([]*storage.Entity, len(order))
	for i, o := range order {
		out[i] = rs[o].entity(idx[o])
	}
	return out, nil
}

// liveSorted returns the live records in id order; the caller holds the
// read lock.
func (p *part) liveSorted() []*rec {
	if c := p.sorted.Load(); c != nil {
		return *c
	}
	rs := make([]*rec, 0, p.nLive)
	for _, r := range p.all {
		if r.live() {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(a, b int) bool { return bytes.Compare(rs[a].id[:], rs[b].id[:]) < 0 })
	p.sorted.Store(&rs)
	return rs
}

func (s *Entities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	p := s.partFor(partKey{tenant, model}, false)
	if p == nil {
		return nil
	}
	p.mu.RLock()
	rs, idx := p.snapshot(at)
	ents := make([]*storage.Entity, len(rs))
	for i, r := range rs {
		ents[i] = r.entity(idx[i])
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

func (s *Entities) DeleteModel(ctx context.Context, tenant string, model storage.ModelKey, txID [16]byte, user string) (int64, time.Time, error) {
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
	for _, r := range p.all {
		if !r.live() {
			continue
		}
		last := r.revs[len(r.revs)-1]
		r.revs = append(r.revs, rev{state: last.state, tx: dels.tx, at: at, change: chDeleted})
		r.audit = append(r.audit, dels.event(last.state))
		r.claims = nil
	}
	p.nLive = 0
	p.claims = nil
	clear(p.states)
	p.sorted.Store(nil)
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
	counts := p.states
	if at != nil {
		counts = map[string]int64{}
		rs, idx := p.snapshot(at)
		for i, r := range rs {
			counts[r.revs[idx[i]].state]++
		}
	}
	var out []storage.StateCount
	for st, n := range counts {
		if n > 0 {
			out = append(out, storage.StateCount{Model: model, State: st, Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].State < out[j].State })
	return out, nil
}
