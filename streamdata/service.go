package streamdata

import (
	"context"
	"crypto/sha256"
	"strconv"
	"time"

	"svc/platform/apierr"
	"svc/storage"
)

// Paging limits (docs/decisions/0025-stream-data.md): length ≤ 0 means DefaultPage; larger than MaxPage
// is clamped.
const (
	DefaultPage = 100
	MaxPage     = 10000
	// maxStreams bounds the bookmark cache (streams, not pages).
	maxStreams = 4096
	// maxSnapshots bounds the memory engine's cached stream orders (about
	// 60 bytes per row each).
	maxSnapshots = 16
)

// Deleter deletes entities one by one through the entity service's normal
// delete path (revision tombstone, audit event, transaction), attributed
// to user of kind kind; a failure is reported per id. entity.Service
// implements it.
type Deleter interface {
	DeleteEach(ctx context.Context, tenant, user, kind string, ids [][16]byte) (removed int64, failed map[[16]byte]string)
}

// Deps are what the service runs on. Pager is optional: without it pages
// are cut from a sorted search of the snapshot (the memory engine).
type Deps struct {
	Configs  storage.StreamConfigs
	Indexes  storage.StreamIndexes
	Models   storage.Models
	Planner  Planner
	Searcher storage.Searcher
	Pager    storage.StreamPager
	Deleter  Deleter
	// Explain, when set, renders PostgreSQL's plan of a page's statement.
	Explain Explainer
	Now     func() time.Time
}

// Service is the stream-data domain service.
type Service struct {
	configs storage.StreamConfigs
	indexes storage.StreamIndexes
	models  storage.Models
	planner Planner
	pager   storage.StreamPager
	deleter Deleter
	explain Explainer
	now     func() time.Time
	marks   *marks
}

// New builds the service.
func New(d Deps) *Service {
	s := &Service{configs: d.Configs, indexes: d.Indexes, models: d.Models, planner: d.Planner, pager: d.Pager,
		deleter: d.Deleter, explain: d.Explain, now: d.Now, marks: newMarks(maxStreams)}
	if s.pager == nil {
		s.pager = NewScanPager(d.Searcher)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Request is a decoded StreamDataRequest (the HTTP adapter decodes the
// body and parses sdDef with ParseDef).
type Request struct {
	Def *Def
	// PointTime is epoch milliseconds; nil or not positive means now.
	PointTime *int64
	// Offset and FromPosIndex are row positions from 0 to MaxPosition;
	// the page starts at the larger.
	Offset, FromPosIndex int
	// Length ≤ 0 means DefaultPage; larger than MaxPage is clamped.
	Length int
}

// MaxPosition bounds offset and fromPosIndex: 2^53-1, the largest integer
// every JSON client (JavaScript's numbers) carries exactly. Past it row
// positions would overflow where a page adds its length.
const MaxPosition = 1<<53 - 1

// PageStream is one prepared page of a StreamDataFetchResult: the request
// compiled, its point in time chosen, nothing read yet. Rows reads it.
type PageStream struct {
	s      *Service
	p      *Plan
	q      *storage.StreamQuery
	k      markKey
	start  int
	offset int
	length int
	pt     int64
}

// PointTime is the page's point in time (epoch ms), chosen by the server
// when the request had none.
func (ps *PageStream) PointTime() int64 { return ps.pt }

// Offset is the request's offset, as the page answers it.
func (ps *PageStream) Offset() int { return ps.offset }

// PageSize is the page length after defaulting and clamping.
func (ps *PageStream) PageSize() int { return ps.length }

// Prepare compiles a StreamDataRequest and pins its point in time: every
// error a client can cause is reported here, before any byte of the page
// is written. The page may be written after Prepare returns, so r.Def must
// not share memory the caller reuses (the HTTP adapter parses a copy of
// the body).
func (s *Service) Prepare(ctx context.Context, tenant string, r *Request) (*PageStream, error) {
	p, err := Compile(ctx, s.models, s.planner, tenant, r.Def)
	if err != nil {
		return nil, err
	}
	start := r.Offset
	if r.FromPosIndex > start {
		start = r.FromPosIndex
	}
	length := r.Length
	if length <= 0 {
		length = DefaultPage
	}
	if length > MaxPage {
		length = MaxPage
	}
	var pt int64
	chosen := r.PointTime == nil || *r.PointTime <= 0
	if chosen {
		pt = s.now().UnixMilli()
	} else {
		pt = *r.PointTime
	}
	// pointTime is in milliseconds; the snapshot is the end of that
	// millisecond, so whatever was written before the first page is in it.
	at := time.UnixMilli(pt).Add(time.Millisecond - time.Nanosecond)
	if chosen {
		// Wait out the rest of the millisecond: a write stamped inside it
		// after this page would otherwise join later pages.
		if d := time.Until(at); d > 0 && d <= time.Millisecond {
			time.Sleep(d + time.Nanosecond)
		}
	}
	q := &storage.StreamQuery{Search: *p.Query, Range: p.Range, Limit: length, Eq: p.eq}
	q.Search.At = &at
	k := markKey{tenant: tenant, def: sha256.Sum256(append(r.Def.digest[:], strconv.Itoa(p.Model.Version)...)), at: pt}
	q.After, q.Skip = s.marks.lookup(k, start)
	q.Stream = string(k.def[:]) + tenant + "\x00" + strconv.FormatInt(pt, 10)
	return &PageStream{s: s, p: p, q: q, k: k, start: start, offset: r.Offset, length: length, pt: pt}, nil
}

// Rows reads the page and calls yield with each row as the engine yields
// it (PostgreSQL: from the cursor; memory: from the snapshot); the Row is
// reused between calls. It returns the lastRowIndexPosition of the page
// (its first position minus one when the page is empty). An error of
// yield ends the page with that error.
func (ps *PageStream) Rows(ctx context.Context, yield func(*Row) error) (int, error) {
	n := 0
	var last storage.StreamMark
	var row Row
	err := ps.s.pager.StreamPage(ctx, ps.q, func(e *storage.Entity, m storage.StreamMark) error {
		ps.p.fillRow(&row, e)
		if err := yield(&row); err != nil {
			return err
		}
		n++
		last = m
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		ps.s.marks.store(ps.k, ps.start+n, last)
	}
	return ps.start + n - 1, nil
}

// DeleteResult is a StreamDataDeleteResult: how many entities the
// definition matched, how many were removed, and the error of each that
// was not.
type DeleteResult struct {
	Matched int64
	Removed int64
	Failed  map[[16]byte]string
}

// Delete deletes every entity the definition selects now (condition and
// range condition; the request's offset and length do not apply), each
// through the normal delete path.
func (s *Service) Delete(ctx context.Context, p Principal, d *Def) (*DeleteResult, error) {
	pl, err := Compile(ctx, s.models, s.planner, p.Tenant, d)
	if err != nil {
		return nil, err
	}
	if s.deleter == nil {
		return nil, apierr.New(apierr.NotImplemented, "stream delete needs the entity service")
	}
	at := s.now()
	q := &storage.StreamQuery{Search: *pl.Query, Range: pl.Range, Eq: pl.eq}
	q.Search.At = &at
	var ids [][16]byte
	if err := s.pager.StreamPage(ctx, q, func(e *storage.Entity, _ storage.StreamMark) error {
		ids = append(ids, e.ID)
		return nil
	}); err != nil {
		return nil, err
	}
	res := &DeleteResult{Matched: int64(len(ids))}
	if len(ids) > 0 {
		res.Removed, res.Failed = s.deleter.DeleteEach(ctx, p.Tenant, p.UserID, p.Kind, ids)
	}
	return res, nil
}
