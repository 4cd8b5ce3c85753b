package memory

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"svc/predicate"
	"svc/storage"
)

// Search is the in-memory storage.Searcher. It scans one (tenant, model)
// partition under its read lock, evaluating the compiled condition on the
// stored bytes with no copy and no allocation per row; only matches are
// materialised, then sorted.
type Search struct {
	e *Entities
	// docs keeps a prepared document (predicate.Doc) per record for its
	// current revision, per partition, so repeated scans look members up
	// through the index instead of scanning the bytes.
	docs sync.Map // *part → *docCache
	// cached counts prepared documents across partitions; past maxDocs no
	// more are kept (scans then match the raw bytes), which bounds the
	// cache's memory.
	cached  atomic.Int64
	maxDocs int64
}

// DefaultMaxPreparedDocs bounds the prepared-document cache: about 290 B
// per small document, a few KB for a 1 KB one.
const DefaultMaxPreparedDocs = 1 << 20

// docCache is one partition's prepared documents, by record slot. An
// entry is valid while its revision is the record's latest; a stale one
// is rebuilt after the scan that found it stale.
type docCache struct {
	mu sync.RWMutex
	m  map[uint32]docEntry
}

type docEntry struct {
	rev uint32
	doc *predicate.Doc
}

// NewSearch searches the entities of e.
func NewSearch(e *Entities) *Search { return &Search{e: e, maxDocs: DefaultMaxPreparedDocs} }

// SetMaxPreparedDocs changes the cache bound; 0 turns the cache off.
func (s *Search) SetMaxPreparedDocs(n int64) { s.maxDocs = n }

func (s *Search) cacheOf(p *part) *docCache {
	if c, ok := s.docs.Load(p); ok {
		return c.(*docCache)
	}
	c, _ := s.docs.LoadOrStore(p, &docCache{m: map[uint32]docEntry{}})
	return c.(*docCache)
}

var _ storage.Searcher = (*Search)(nil)

// uuidText formats id into buf (36 bytes) and returns it as a string that
// aliases buf: valid until buf is rewritten, which is enough for Match.
func uuidText(buf *[36]byte, id [16]byte) string {
	const hex = "0123456789abcdef"
	j := 0
	for i, x := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[j] = '-'
			j++
		}
		buf[j], buf[j+1] = hex[x>>4], hex[x&15]
		j += 2
	}
	return unsafe.String(&buf[0], 36)
}

type hit struct {
	h   uint32
	r   *recSlot
	ri  uint32
	ver int
}

// scan returns the matching (record, revision) pairs, at most max+1 when
// max > 0 and there is no sort (id order is applied afterwards, so the
// scan must then see every row).
func (s *Search) scan(ctx context.Context, q *storage.SearchQuery) ([]*storage.Entity, error) {
	p := s.e.partFor(partKey{q.Tenant, q.Model}, false)
	if p == nil {
		return nil, nil
	}
	var idBuf, txBuf [36]byte
	var m predicate.Meta
	var hits, misses []hit
	var cache *docCache
	if q.At == nil && q.Cond != nil {
		cache = s.cacheOf(p)
		cache.mu.RLock()
	}
	test := func(x hit) {
		if q.Cond == nil {
			hits = append(hits, x)
			return
		}
		v := p.rev(x.ri)
		mp := &m
		if q.NoMeta {
			mp = nil
		} else {
			m = predicate.Meta{
				ID: uuidText(&idBuf, x.r.id), State: p.strs[v.state], TransitionForLatestSave: p.strs[v.transition],
				TransactionID: uuidText(&txBuf, v.txID),
				CreationDate:  time.Unix(0, x.r.created), LastUpdateTime: time.Unix(0, v.at),
			}
		}
		var ok bool
		if cache != nil {
			if d, found := cache.m[x.h]; found && d.rev == x.ri {
				ok = q.Cond.MatchDoc(d.doc, mp)
			} else {
				misses = append(misses, x)
				ok = q.Cond.Match(p.data(v), mp)
			}
		} else {
			ok = q.Cond.Match(p.data(v), mp)
		}
		if ok {
			hits = append(hits, x)
		}
	}
	p.mu.RLock()
	recs := s.e.recs.view()
	n := 0
	if q.At == nil {
		for _, h := range p.all {
			if r := recs.at(h); p.live(r) {
				test(hit{h, r, r.last, int(r.nrev)})
			}
			if n++; n&4095 == 0 && ctx.Err() != nil {
				break
			}
		}
	} else {
		ns := q.At.UnixNano()
		for _, h := range p.all {
			r := recs.at(h)
			if ri, ver := p.liveAt(r, ns); ri != 0 {
				test(hit{h, r, ri, ver})
			}
			if n++; n&4095 == 0 && ctx.Err() != nil {
				break
			}
		}
	}
	if cache != nil {
		cache.mu.RUnlock()
	}
	out := make([]*storage.Entity, len(hits))
	for k, h := range hits {
		out[k] = p.entity(h.r, h.ri, h.ver)
	}
	liveN := p.nLive
	docs := make([][]byte, len(misses))
	for k, h := range misses {
		docs[k] = p.data(p.rev(h.ri))
	}
	p.mu.RUnlock()
	if len(misses) > 0 && s.cached.Load()+int64(len(misses)) > s.maxDocs {
		misses = nil
	}
	if len(misses) > 0 {
		// Revisions are immutable, so their documents can be indexed
		// outside the partition lock.
		prepared := make([]*predicate.Doc, len(misses))
		for k, d := range docs {
			prepared[k] = predicate.NewDoc(d)
		}
		cache.mu.Lock()
		if len(cache.m) > 2*liveN+1024 {
			// Drop entries of deleted records now and then.
			s.cached.Add(-int64(len(cache.m)))
			clear(cache.m)
		}
		for k, h := range misses {
			if _, ok := cache.m[h.h]; !ok {
				s.cached.Add(1)
			}
			cache.m[h.h] = docEntry{rev: h.ri, doc: prepared[k]}
		}
		cache.mu.Unlock()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Search) Search(ctx context.Context, q *storage.SearchQuery) ([]*storage.Entity, error) {
	es, err := s.scan(ctx, q)
	if err != nil {
		return nil, err
	}
	storage.SortEntities(es, q.Sort)
	if q.Max > 0 && len(es) > q.Max+1 {
		es = es[:q.Max+1]
	}
	return es, nil
}

func (s *Search) SearchIDs(ctx context.Context, q *storage.SearchQuery) ([][16]byte, error) {
	es, err := s.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	ids := make([][16]byte, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids, nil
}

func (s *Search) Fetch(ctx context.Context, tenant string, ids [][16]byte, at *time.Time) ([]*storage.Entity, error) {
	out := make([]*storage.Entity, 0, len(ids))
	for _, id := range ids {
		var e *storage.Entity
		var err error
		if at == nil {
			e, err = s.e.Get(ctx, tenant, id)
		} else {
			e, err = s.e.GetAt(ctx, tenant, id, *at)
		}
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
