package entity

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"

	"svc/idempotency"
	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

// Chunk is one committed transaction of a write request.
type Chunk struct {
	TxID   [16]byte
	IDs    [][16]byte
	Failed []Failure // items isolated by a stale ifMatch (collection update)
}

// Failure is one isolated item of a collection update.
type Failure struct {
	ID    [16]byte
	Index int // within its chunk
	Err   *apierr.Error
}

// Result is the outcome of a chunked write: the committed chunks in commit
// order and, when a later chunk failed, its error (earlier chunks stay
// durable; later ones were not attempted).
type Result struct {
	Chunks   []Chunk
	Err      *apierr.Error
	ErrChunk int
}

// ValidWindow checks transactionWindow (0 < w ≤ 1000).
func ValidWindow(w int) error {
	if w <= 0 || w > MaxWindow {
		return apierr.New(apierr.BadRequest, "transactionWindow must be in (0, "+strconv.Itoa(MaxWindow)+"]",
			apierr.P("parameter", "transactionWindow"), apierr.P("invalidValue", strconv.Itoa(w)))
	}
	return nil
}

// runChunks commits n items in chunks of window through commit; the first
// chunk's failure is the request's error.
func runChunks(ctx context.Context, n, window int, commit func(ctx context.Context, lo, hi int) (Chunk, error)) (*Result, error) {
	res := &Result{}
	keyed := idempotency.ClaimFrom(ctx) != nil
	for k, lo := 0, 0; lo < n || (n == 0 && k == 0); k, lo = k+1, lo+window {
		hi := min(lo+window, n)
		cctx := ctx
		if keyed {
			// A keyed request's answer so far, stored with each chunk.
			done := slices.Clip(res.Chunks)
			cctx = withProgress(ctx, func(txID [16]byte, ids [][16]byte) any {
				return &Result{Chunks: append(done, Chunk{TxID: txID, IDs: ids})}
			})
		}
		c, err := commit(cctx, lo, hi)
		if err != nil {
			if k == 0 {
				return nil, err
			}
			res.Err, res.ErrChunk = AsAPI(err), k
			break
		}
		res.Chunks = append(res.Chunks, c)
		if n == 0 {
			break
		}
	}
	return res, nil
}

// toJSON turns a body of format into JSON.
func (s *Service) toJSON(format string, body []byte) ([]byte, error) {
	switch format {
	case "JSON":
		return body, nil
	case "XML":
		if s.xmlToJSON == nil {
			return nil, badRequest("unsupported format")
		}
		out, err := s.xmlToJSON(body)
		if err != nil {
			if _, ok := apierr.As(err); ok {
				return nil, err
			}
			return nil, badRequest("invalid XML")
		}
		return out, nil
	}
	return nil, badRequest("unsupported format")
}

// Create serves POST /entity/{format}/{name}/{version}: an object creates
// one entity, a JSON array one entity per element in chunks of window.
func (s *Service) Create(ctx context.Context, a Actor, key storage.ModelKey, format string, body []byte, window int) (*Result, error) {
	if format != "JSON" && format != "XML" {
		return nil, badRequest("unsupported format")
	}
	m, err := s.lockedModel(ctx, a.Tenant, key)
	if err != nil {
		return nil, err
	}
	doc, err := s.toJSON(format, body)
	if err != nil {
		return nil, err
	}
	doc = bytes.TrimSpace(doc)
	var docs [][]byte
	if format == "JSON" && len(doc) > 0 && doc[0] == '[' {
		if err := jsondoc.CheckProblem(doc, "invalid JSON", ""); err != nil {
			return nil, err
		}
		docs = splitArray(doc)
		if err := s.checkCount(len(docs)); err != nil {
			return nil, err
		}
		for i, d := range docs {
			if d[0] != '{' {
				return nil, badRequest("invalid JSON: element " + strconv.Itoa(i) + " is not an object")
			}
		}
	} else {
		if len(doc) == 0 || doc[0] != '{' {
			return nil, badRequest("invalid JSON")
		}
		if err := jsondoc.CheckProblem(doc, "invalid JSON", ""); err != nil {
			return nil, err
		}
		docs = [][]byte{doc}
	}
	return runChunks(ctx, len(docs), window, func(ctx context.Context, lo, hi int) (Chunk, error) {
		items := make([]newItem, hi-lo)
		for i := range items {
			// The first chunk may be admitted against m as read above;
			// a later one reads the model again, as it may have changed
			// while the earlier chunks committed.
			items[i] = newItem{model: m, data: docs[lo+i], fresh: lo == 0}
		}
		return s.commitCreates(ctx, a, items, -1)
	})
}

type newItem struct {
	model *storage.Model
	data  []byte
	// fresh: model was read for this request just before, so a
	// LoadedGate may admit against it without reading it again.
	fresh bool
}

// commitCreates admits, settles and commits one chunk of new entities.
// Item errors are numbered from base within the request; base < 0 leaves
// them unnumbered (single-model create).
func (s *Service) commitCreates(ctx context.Context, a Actor, items []newItem, base int) (Chunk, error) {
	// prefix: find the refused item and name it (base >= 0: "item N: " in
	// the message; locateItem: an *itemAt the caller maps to its own
	// numbering, an NDJSON line).
	prefix := base >= 0 || base == locateItem
	wrap := func(k int, err error) error {
		if base == locateItem {
			return &itemAt{index: k, err: err}
		}
		return itemErr(base+k, err)
	}
	// Admit per model, all documents of a model at once; on failure find
	// the first offending item so the error can name it.
	for i := 0; i < len(items); {
		j := i
		var docs [][]byte
		for ; j < len(items) && items[j].model == items[i].model; j++ {
			docs = append(docs, items[j].data)
		}
		if err := s.admit(ctx, a.Tenant, &items[i], docs); err != nil {
			if !prefix {
				return Chunk{}, err
			}
			// The gate names the refused document when it can; admitting
			// the documents one by one instead would persist the widening
			// of those before it although the chunk is refused.
			var doc interface{ DocIndex() int }
			if errors.As(err, &doc) && doc.DocIndex() >= 0 && doc.DocIndex() < j-i {
				return Chunk{}, wrap(i+doc.DocIndex(), err)
			}
			for k := i; k < j; k++ {
				if e := s.gate.Admit(ctx, a.Tenant, items[k].model.Key, docs[k-i:k-i+1]); e != nil {
					return Chunk{}, wrap(k, e)
				}
			}
			return Chunk{}, wrap(i, err)
		}
		i = j
	}
	for i, it := range items {
		if err := s.checkKeys(it.model, it.data); err != nil {
			if prefix {
				err = wrap(i, err)
			}
			return Chunk{}, err
		}
	}
	txID, err := txIDFor(ctx)
	if err != nil {
		return Chunk{}, err
	}
	ctx, ow := s.ownTx(ctx, a.Tenant, txID)
	defer ow.done()
	tx := &storage.Tx{Tenant: a.Tenant, ID: txID, User: a.User, Attribution: a.attribution(), Writes: make([]storage.Write, len(items))}
	ids := make([][16]byte, len(items))
	var evs [][]storage.AuditEvent
	// A chunk of one entity may segment (COMMIT_BEFORE_DISPATCH).
	var seg *segment
	if ow != nil && len(items) > 1 {
		ow.cur.reserveView(len(items))
	}
	for i, it := range items {
		if ids[i], err = newTimeID(); err != nil {
			return Chunk{}, err
		}
		ictx := ctx
		if len(items) == 1 && ow != nil {
			seg = &segment{s: s, a: a, id: ids[i], model: it.model.Key, transition: "loopback", txID: txID}
			ictx = withSegment(ctx, seg)
		}
		st, err := s.onCreate(ictx, a.Tenant, it.model, ids[i], txID, it.data)
		if err != nil {
			if prefix {
				err = wrap(i, err)
			}
			return Chunk{}, err
		}
		ops, err := s.reconcile(ctx, a.Tenant, ids[i], txID, &st, true, nil, "")
		if err != nil {
			return Chunk{}, err
		}
		tx.Tasks = append(tx.Tasks, ops...)
		if st.Events != nil {
			if evs == nil {
				evs = make([][]storage.AuditEvent, len(items))
			}
			evs[i] = st.Events
		}
		tx.Writes[i] = storage.Write{ID: ids[i], Model: it.model.Key, State: st.State, Data: st.Data, Transition: "loopback"}
		if err := s.keyWrite(it.model, &tx.Writes[i]); err != nil {
			if prefix {
				err = wrap(i, err)
			}
			return Chunk{}, err
		}
		if ow != nil && len(items) > 1 {
			// Callbacks of the chunk's later items read this one.
			ow.cur.show(tx.Writes[i], true, a.User)
		}
	}
	if seg != nil {
		seg.finish(tx, &tx.Writes[0])
	}
	stamp(ctx, tx, txID, ids)
	if _, err := s.commitOwned(ctx, withAudit(tx, evs)); err != nil {
		return Chunk{}, err
	}
	return Chunk{TxID: txID, IDs: ids}, nil
}

// admit admits docs, all of its model, through the gate: against the
// model as read when it is fresh and the gate can.
func (s *Service) admit(ctx context.Context, tenant string, it *newItem, docs [][]byte) error {
	if lg, ok := s.gate.(LoadedGate); ok && it.fresh && it.model.Tenant == tenant {
		return lg.AdmitLoaded(ctx, it.model, docs)
	}
	return s.gate.Admit(ctx, tenant, it.model.Key, docs)
}

// CollectionItem is one element of a mixed-model collection create (POST
// /entity/{format}): its model and the entity as a JSON-encoded string.
// Nil members were absent. The adapter decodes the array.
type CollectionItem struct {
	Model *struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	} `json:"model"`
	Payload *string `json:"payload"`
}

// CreateCollection creates items of possibly different models in chunks
// of window. Every item of a chunk is checked before its transaction
// begins.
func (s *Service) CreateCollection(ctx context.Context, a Actor, items []CollectionItem, window int) (*Result, error) {
	if err := s.checkCount(len(items)); err != nil {
		return nil, err
	}
	cache := map[storage.ModelKey]*storage.Model{}
	return runChunks(ctx, len(items), window, func(ctx context.Context, lo, hi int) (Chunk, error) {
		chunk := make([]newItem, hi-lo)
		for i := lo; i < hi; i++ {
			it := &items[i]
			if it.Model == nil || it.Model.Name == "" {
				return Chunk{}, badRequest("item " + strconv.Itoa(i) + ": missing model")
			}
			if err := jsondoc.TextProblem("field", "model.name", it.Model.Name); err != nil {
				return Chunk{}, itemErr(i, err)
			}
			if it.Payload == nil {
				return Chunk{}, badRequest("item " + strconv.Itoa(i) + ": invalid JSON payload")
			}
			key := storage.ModelKey{Name: it.Model.Name, Version: it.Model.Version}
			m := cache[key]
			if m == nil {
				var err error
				if m, err = s.lockedModel(ctx, a.Tenant, key); err != nil {
					return Chunk{}, itemErr(i, err)
				}
				cache[key] = m
			}
			p := bytes.TrimSpace([]byte(*it.Payload))
			if len(p) == 0 || p[0] != '{' {
				return Chunk{}, badRequest("item " + strconv.Itoa(i) + ": invalid JSON payload")
			}
			if err := jsondoc.CheckProblem(p, "item "+strconv.Itoa(i)+": invalid JSON payload", "item "+strconv.Itoa(i)+": payload"); err != nil {
				return Chunk{}, err
			}
			chunk[i-lo] = newItem{model: m, data: p}
		}
		return s.commitCreates(ctx, a, chunk, lo)
	})
}

// splitArray returns the elements of a valid JSON array, without copying.
func splitArray(b []byte) [][]byte {
	var out [][]byte
	i := 1
	skip := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	skip()
	if i < len(b) && b[i] == ']' {
		return out
	}
	for i < len(b) {
		skip()
		start, depth := i, 0
	scan:
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				// Jump to the next quote (IndexByte is vectorised: most of
				// an order document's bytes are string content); it closes
				// the string unless an odd run of backslashes escapes it.
				for i++; ; i++ {
					q := bytes.IndexByte(b[i:], '"')
					if q < 0 {
						i = len(b)
						break
					}
					i += q
					bs := 0
					for k := i - 1; b[k] == '\\'; k-- {
						bs++
					}
					if bs%2 == 0 {
						break
					}
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					break scan
				}
				depth--
			case ',':
				if depth == 0 {
					break scan
				}
			}
		}
		out = append(out, bytes.TrimRight(b[start:i], " \t\r\n"))
		if i >= len(b) || b[i] == ']' {
			break
		}
		i++ // the comma
	}
	return out
}
