package entity

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
	"svc/txtoken"
	"svc/workflow"
)

// Joining a transaction (docs/decisions/0015-transactions.md). A write that runs the
// workflow engine owns a transaction: its engine run hands compute
// members a routing token for it, and a member calling back with that
// token joins it. svc buffers a write in memory and commits it in one
// storage.Commit at the end, so "the owner's buffer" is an OpenTx: the
// joined requests' writes (each already settled by its own workflow run,
// with its audit events and task changes) wait there and are merged into
// the owner's commit, all or nothing.
//
// What a joined request sees and does:
//   - every current read (get by id, list, search direct and over gRPC,
//     stats, grouped stats, changes, transitions, and the loads of every
//     write) sees
//     the transaction's uncommitted writes over committed data, through
//     the storage overlays (storage/overlay.go): the writes of joined
//     requests, the owner's entities already settled in its chunk, and
//     the entity the owner's run is processing as it stands at each
//     dispatch (Run.Publish). Reads at a point in time or a transaction
//     and async search read committed data;
//   - create, update, patch, collection update, delete, delete by
//     condition and delete all add to the buffer and answer with the
//     owner's transaction id;
//   - when owner and callback both write one entity, the owner's write
//     wins: a processor's returned data wins over its callback's write of
//     the same entity (docs/decisions/0017-workflow-engine.md).

// JoinKey is the context key under which a joined request carries its
// OpenTx. It is a string because the HTTP layer sets it as a fasthttp
// user value (see iam.PrincipalKey).
const JoinKey = storage.PendingKey

type txState uint8

const (
	txOpen txState = iota
	txCommitted
	txRolledBack
)

// OpenTx is one open transaction that joined requests write into. It is
// safe for concurrent use: the owner blocks on a member while the
// member's callbacks add to it, and a member may call back concurrently.
type OpenTx struct {
	id     [16]byte
	tenant string
	reg    *joins

	mu    sync.Mutex
	state txState
	// token is minted on first use, registering the transaction.
	token string
	// parts are the joined requests' settled writes, in arrival order.
	parts []*storage.Tx
	// view is what joined reads see, latest last: the writes of parts,
	// and the owner's writes shown as it makes them (show).
	view []viewEntry
}

// viewEntry is one uncommitted write as reads show it.
type viewEntry struct {
	w storage.Write
	// create: the entity is new in the transaction.
	create bool
	at     time.Time
	user   string
}

// ID is the transaction's id: what joined writes answer with.
func (o *OpenTx) ID() [16]byte { return o.id }

// Tenant is the tenant the transaction writes in.
func (o *OpenTx) Tenant() string { return o.tenant }

// joins is the per-process registry of transactions open to joining.
type joins struct {
	signer *txtoken.Signer
	mu     sync.Mutex
	open   map[[16]byte]*OpenTx
}

// DefaultTxTokenTTL is SVC_TX_TOKEN_TTL's default.
const DefaultTxTokenTTL = 90 * time.Second

func newJoins(sg *txtoken.Signer) *joins {
	return &joins{signer: sg, open: map[[16]byte]*OpenTx{}}
}

// WithTxTokens sets the signer of routing tokens (node id, secret,
// SVC_TX_TOKEN_TTL); without it the service signs with a random secret
// and the default lifetime.
func WithTxTokens(sg *txtoken.Signer) Option {
	return func(s *Service) { s.joins = newJoins(sg) }
}

func defaultJoins() *joins {
	sg, err := txtoken.NewRandom("local", DefaultTxTokenTTL)
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(err)
	}
	return newJoins(sg)
}

// newOpenTx is the transaction an owner write is about to run in; it is
// registered only once a token is minted for it.
func (j *joins) newOpenTx(tenant string, id [16]byte) *OpenTx {
	return &OpenTx{id: id, tenant: tenant, reg: j}
}

// Token returns the transaction's routing token, registering the
// transaction for joining on first use. A closed transaction has none.
func (o *OpenTx) Token() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != txOpen {
		return ""
	}
	if o.token == "" {
		o.token = o.reg.signer.Sign(uuid.UUID(o.id).String())
		o.reg.mu.Lock()
		o.reg.open[o.id] = o
		o.reg.mu.Unlock()
	}
	return o.token
}

// finish closes the transaction (committed or rolled back) and removes it
// from the registry; later joins and joined writes get
// TRANSACTION_NOT_FOUND. Idempotent: the first outcome stays.
func (o *OpenTx) finish(st txState) {
	o.close(st)
}

// close sets the outcome and hands back the buffered joined writes, in
// one critical section so that no joined write lands in between and is
// lost; then it unregisters the transaction.
func (o *OpenTx) close(st txState) []*storage.Tx {
	o.mu.Lock()
	if o.state == txOpen {
		o.state = st
	}
	parts := o.parts
	o.parts, o.view = nil, nil
	registered := o.token != ""
	o.mu.Unlock()
	if registered {
		o.reg.mu.Lock()
		if o.reg.open[o.id] == o {
			delete(o.reg.open, o.id)
		}
		o.reg.mu.Unlock()
	}
	return parts
}

// seal merges the joined writes into the owner's transaction tx (its
// audit already built) and closes the transaction to further joins, in
// one step, so no joined write can land after the merge and be lost. The
// owner's writes win over joined writes of the same entity; joined task
// changes apply before the owner's. If the commit that follows fails,
// the joined writes fail with it.
func (o *OpenTx) seal(tx *storage.Tx) {
	parts := o.close(txCommitted)
	if len(parts) == 0 {
		return
	}
	own := make(map[[16]byte]bool, len(tx.Writes))
	for i := range tx.Writes {
		own[tx.Writes[i].ID] = true
	}
	var tasks []storage.TaskOp
	ownerKind := ""
	if tx.Attribution != nil {
		ownerKind = tx.Attribution.UserKind
	}
	// A joined write commits under the owner's user: the member acted for
	// the owner's principal (the dispatch carried it), so the revision is
	// attributed to that principal and executed by the caller whose save
	// came last (docs/decisions/0014-entities.md). Set before merging, so a fold keeps
	// the last save's executor.
	for _, p := range parts {
		if p.Attribution == nil {
			continue
		}
		attr := &storage.Attribution{UserKind: ownerKind, ExecID: p.Attribution.ExecID, ExecKind: p.Attribution.ExecKind}
		for i := range p.Writes {
			p.Writes[i].Attribution = attr
		}
	}
	for _, p := range merged(parts) {
		for _, w := range p.Writes {
			if !own[w.ID] {
				tx.Writes = append(tx.Writes, w)
			}
		}
		tx.Audit = append(tx.Audit, p.Audit...)
		tasks = append(tasks, p.Tasks...)
	}
	tx.Tasks = append(tasks, tx.Tasks...)
}

// merged folds several joined saves of one entity into one write (one
// revision per transaction): the last save's content under the first
// save's expected version; a create deleted again writes nothing.
func merged(parts []*storage.Tx) []*storage.Tx {
	first := map[[16]byte]*storage.Write{}
	out := make([]*storage.Tx, len(parts))
	for i, p := range parts {
		q := *p
		q.Writes = nil
		for _, w := range p.Writes {
			if f, ok := first[w.ID]; ok {
				exp := f.ExpectVersion
				*f = w
				f.ExpectVersion = exp
				continue
			}
			q.Writes = append(q.Writes, w)
		}
		for k := range q.Writes {
			first[q.Writes[k].ID] = &q.Writes[k]
		}
		out[i] = &q
	}
	for _, p := range out {
		kept := p.Writes[:0]
		for _, w := range p.Writes {
			if !(w.Delete && w.ExpectVersion == 0) {
				kept = append(kept, w)
			}
		}
		p.Writes = kept
	}
	return out
}

// add buffers a joined request's settled writes (audit and task changes
// included) in the transaction.
func (o *OpenTx) add(tx *storage.Tx) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != txOpen {
		return txNotFound()
	}
	// A write's document may be its request's body, which the server
	// reuses once the request is answered, long before the owner commits.
	for i := range tx.Writes {
		if tx.Writes[i].Data != nil {
			tx.Writes[i].Data = append([]byte(nil), tx.Writes[i].Data...)
		}
	}
	o.parts = append(o.parts, tx)
	now := time.Now().UTC()
	for _, w := range tx.Writes {
		o.view = append(o.view, viewEntry{w: w, create: w.ExpectVersion == 0, at: now, user: tx.User})
	}
	return nil
}

// show adds an owner's uncommitted write to what joined reads see; it is
// not merged at commit (the owner commits its own writes).
// reserveView makes room for n more writes in the view, so a chunk that
// shows each of its creates grows it once (a 1,000-document chunk grew it
// ten times, copying ~0.5 MB per request).
func (o *OpenTx) reserveView(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state == txOpen && cap(o.view)-len(o.view) < n {
		o.view = append(make([]viewEntry, 0, len(o.view)+n), o.view...)
	}
}

func (o *OpenTx) show(w storage.Write, create bool, user string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state == txOpen {
		o.view = append(o.view, viewEntry{w: w, create: create, at: time.Now().UTC(), user: user})
	}
}

// publisher is a run's Publish for the entity it processes: members
// calling back while it dispatches read the entity as the run has it.
func publisher(o *OpenTx, id [16]byte, model storage.ModelKey, create bool, user string) func(*workflow.Entity) {
	return func(e *workflow.Entity) {
		// The run's data may be the request's buffer, which outlives
		// neither the request nor a later rewrite: keep a copy.
		o.show(storage.Write{ID: id, Model: model, State: e.Meta.State, Data: append([]byte(nil), e.Data...),
			Transition: "loopback"}, create, user)
	}
}

// entityOf is v as a read shows it; base is the committed revision (nil
// when none or not known).
func (o *OpenTx) entityOf(v *viewEntry, base *storage.Entity) *storage.Entity {
	w := &v.w
	e := &storage.Entity{Tenant: o.tenant, ID: w.ID, Model: w.Model, State: w.State, Data: w.Data,
		Version: w.ExpectVersion, CreatedAt: v.at, UpdatedAt: v.at, TxID: o.id,
		Transition: w.Transition, ChangeType: storage.ChangeCreated, User: v.user}
	if !v.create {
		e.ChangeType = storage.ChangeUpdated
		if base != nil {
			e.CreatedAt = base.CreatedAt
		}
	}
	if w.Delete {
		e.Deleted, e.ChangeType, e.Data = true, storage.ChangeDeleted, nil
		if base != nil {
			e.State = base.State
		}
	}
	return e
}

// PendingTenant implements storage.Pending.
func (o *OpenTx) PendingTenant() string { return o.tenant }

// PendingEntity implements storage.Pending: the latest uncommitted write
// of id, over base, the committed revision.
func (o *OpenTx) PendingEntity(id [16]byte, base *storage.Entity) (*storage.Entity, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.view) - 1; i >= 0; i-- {
		if o.view[i].w.ID == id {
			return o.entityOf(&o.view[i], base), true
		}
	}
	return nil, false
}

// PendingEntities implements storage.Pending: the latest uncommitted
// write of each entity of model.
func (o *OpenTx) PendingEntities(model storage.ModelKey) []*storage.Entity {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*storage.Entity
	var seen map[[16]byte]bool
	for i := len(o.view) - 1; i >= 0; i-- {
		v := &o.view[i]
		if v.w.Model != model || seen[v.w.ID] {
			continue
		}
		if seen == nil {
			seen = map[[16]byte]bool{}
		}
		seen[v.w.ID] = true
		out = append(out, o.entityOf(v, nil))
	}
	return out
}

// WithSavepoint implements workflow.SavepointRunner: joined writes made
// while fn runs (an ASYNC_NEW_TX processor's callbacks) are dropped when
// fn fails.
func (o *OpenTx) WithSavepoint(ctx context.Context, fn func(ctx context.Context) error) error {
	o.mu.Lock()
	mark, vmark := len(o.parts), len(o.view)
	o.mu.Unlock()
	err := fn(ctx)
	if err != nil {
		o.mu.Lock()
		if len(o.parts) > mark {
			o.parts = o.parts[:mark]
		}
		if len(o.view) > vmark {
			o.view = o.view[:vmark]
		}
		o.mu.Unlock()
	}
	return err
}

// Token errors (docs/decisions/0015-transactions.md).
func txNotFound() error {
	return apierr.New(apierr.TransactionNotFound, "transaction not found: it is unknown, committed or rolled back")
}

// JoinTx resolves a routing token presented by a request of tenant to the
// open transaction it names: 410 TRANSACTION_EXPIRED, 401 UNAUTHORIZED
// (bad signature, malformed), 403 FORBIDDEN (another tenant's
// transaction), 404 TRANSACTION_NOT_FOUND (unknown, committed, rolled
// back, or minted by another node).
func (s *Service) JoinTx(tenant, token string) (*OpenTx, error) {
	c, err := s.joins.signer.Verify(token)
	switch {
	case errors.Is(err, txtoken.ErrExpired):
		return nil, apierr.New(apierr.TransactionExpired, "transaction token expired")
	case err != nil:
		return nil, apierr.New(apierr.Unauthorized, "invalid transaction token")
	}
	id, err := uuid.Parse(c.Tx)
	if err != nil || c.Node != s.joins.signer.Node() {
		return nil, txNotFound()
	}
	s.joins.mu.Lock()
	o := s.joins.open[id]
	s.joins.mu.Unlock()
	if o == nil {
		return nil, txNotFound()
	}
	if o.tenant != tenant {
		return nil, apierr.New(apierr.Forbidden, "the transaction belongs to another tenant")
	}
	o.mu.Lock()
	st := o.state
	o.mu.Unlock()
	if st != txOpen {
		return nil, txNotFound()
	}
	return o, nil
}

// WithJoined returns ctx carrying a joined transaction (gRPC; the HTTP
// layer sets JoinKey as a user value instead).
func WithJoined(ctx context.Context, o *OpenTx) context.Context {
	return context.WithValue(ctx, JoinKey, o) //nolint:staticcheck // string key shared with fasthttp user values
}

// joinedFrom returns the transaction a request joined, or nil.
func joinedFrom(ctx context.Context) *OpenTx {
	o, _ := ctx.Value(JoinKey).(*OpenTx)
	return o
}

// owner is the transaction an owner write currently runs in; a segmented
// run (COMMIT_BEFORE_DISPATCH) moves it on to TX_post.
type owner struct {
	cur *OpenTx
	// entry is the transaction the write begins in, allocated with the
	// owner: one allocation per write.
	entry OpenTx
}

type ownerKey struct{}

// ownTx starts an owner write's transaction txID on ctx; the caller must
// call done when the write has committed or failed. A request that joined
// another transaction owns none (nil): its writes go to the joined one.
func (s *Service) ownTx(ctx context.Context, tenant string, txID [16]byte) (context.Context, *owner) {
	if joinedFrom(ctx) != nil {
		return ctx, nil
	}
	ow := &owner{entry: OpenTx{id: txID, tenant: tenant, reg: s.joins}}
	ow.cur = &ow.entry
	return context.WithValue(ctx, ownerKey{}, ow), ow
}

// done rolls the transaction back unless it was sealed for commit.
func (ow *owner) done() {
	if ow != nil {
		ow.cur.finish(txRolledBack)
	}
}

// runTx is the transaction an engine run on ctx writes in: the joined
// one, else the owner's current one, else nil.
func runTx(ctx context.Context) *OpenTx {
	if o := joinedFrom(ctx); o != nil {
		return o
	}
	if ow, _ := ctx.Value(ownerKey{}).(*owner); ow != nil {
		return ow.cur
	}
	return nil
}

// commitOwned commits an owner write: joined writes merge in first. A
// joined request instead buffers tx in the transaction it joined and
// reports that transaction's id.
func (s *Service) commitOwned(ctx context.Context, tx *storage.Tx) ([16]byte, error) {
	if j := joinedFrom(ctx); j != nil {
		if j.tenant != tx.Tenant {
			return [16]byte{}, apierr.New(apierr.Forbidden, "the transaction belongs to another tenant")
		}
		tx.ID = j.id
		if err := j.add(tx); err != nil {
			return [16]byte{}, err
		}
		return j.id, nil
	}
	if ow, _ := ctx.Value(ownerKey{}).(*owner); ow != nil {
		ow.cur.seal(tx)
	}
	_, err := s.store.Commit(ctx, tx)
	return tx.ID, commitErr(err)
}

// latest is the entity as a request sees it: inside a joined transaction
// its uncommitted write, if any, over the committed revision (the store
// is wrapped in overlay.Entities).
func (s *Service) latest(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	return s.store.Get(ctx, tenant, id)
}
