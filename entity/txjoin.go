package entity

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"svc/apierr"
	"svc/storage"
	"svc/txtoken"
)

// Joining a transaction (entity-workflow.md §2.5). A write that runs the
// workflow engine owns a transaction: its engine run hands compute
// members a routing token for it, and a member calling back with that
// token joins it. svc buffers a write in memory and commits it in one
// storage.Commit at the end, so "the owner's buffer" is an OpenTx: the
// joined requests' writes (each already settled by its own workflow run,
// with its audit events and task changes) wait there and are merged into
// the owner's commit, all or nothing.
//
// What a joined request sees and does:
//   - entity get by id (latest) and the loads of update, patch, collection
//     update, delete and the gRPC transition see the writes buffered in
//     the transaction by joined requests, over committed data;
//   - create, update, patch, collection update and delete add to the
//     buffer and answer with the owner's transaction id; delete by model
//     (and by condition) is refused with 501;
//   - every other read (lists, search, stats, changes, transitions,
//     reads at a point in time or a transaction) reads committed data;
//   - the owner's own pending write of the entity it is running on is not
//     in the buffer (it is settled after its processors), so a callback
//     reads that entity as last committed. When owner and callback both
//     write it, the owner's write wins: a processor's returned data wins
//     over its callback's write of the same entity (§4.5).

// JoinKey is the context key under which a joined request carries its
// OpenTx. It is a string because the HTTP layer sets it as a fasthttp
// user value (see iam.PrincipalKey).
const JoinKey = "svc.txjoin"

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
	// at is when each part was buffered (reads show it as the update time).
	at []time.Time
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
	o.parts, o.at = nil, nil
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
	o.parts = append(o.parts, tx)
	o.at = append(o.at, time.Now().UTC())
	return nil
}

// lookup returns the entity as the transaction's buffer has it: found
// says the buffer holds a write of id; a nil entity then means it is
// deleted there. base is the committed revision (nil when none).
func (o *OpenTx) lookup(id [16]byte, base *storage.Entity) (e *storage.Entity, found bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.parts) - 1; i >= 0; i-- {
		p := o.parts[i]
		for k := range p.Writes {
			w := &p.Writes[k]
			if w.ID != id {
				continue
			}
			if w.Delete {
				return nil, true
			}
			e := &storage.Entity{Tenant: o.tenant, ID: id, Model: w.Model, State: w.State, Data: w.Data,
				Version: w.ExpectVersion, CreatedAt: o.at[i], UpdatedAt: o.at[i], TxID: o.id,
				Transition: w.Transition, ChangeType: storage.ChangeCreated, User: p.User}
			if w.ExpectVersion != 0 {
				e.ChangeType = storage.ChangeUpdated
				if base != nil {
					e.CreatedAt = base.CreatedAt
				}
			}
			return e, true
		}
	}
	return nil, false
}

// WithSavepoint implements workflow.SavepointRunner: joined writes made
// while fn runs (an ASYNC_NEW_TX processor's callbacks) are dropped when
// fn fails.
func (o *OpenTx) WithSavepoint(ctx context.Context, fn func(ctx context.Context) error) error {
	o.mu.Lock()
	mark := len(o.parts)
	o.mu.Unlock()
	err := fn(ctx)
	if err != nil {
		o.mu.Lock()
		if len(o.parts) > mark {
			o.parts, o.at = o.parts[:mark], o.at[:mark]
		}
		o.mu.Unlock()
	}
	return err
}

// Token errors (§2.5).
func txNotFound() error {
	return apierr.New("TRANSACTION_NOT_FOUND", "transaction not found: it is unknown, committed or rolled back")
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
		return nil, apierr.New("TRANSACTION_EXPIRED", "transaction token expired")
	case err != nil:
		return nil, apierr.New("UNAUTHORIZED", "invalid transaction token")
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
		return nil, apierr.New("FORBIDDEN", "the transaction belongs to another tenant")
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
			return [16]byte{}, apierr.New("FORBIDDEN", "the transaction belongs to another tenant")
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
// the buffered write of it, if any, over the committed revision.
func (s *Service) latest(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	e, err := s.store.Get(ctx, tenant, id)
	if j := joinedFrom(ctx); j != nil && j.tenant == tenant {
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		if b, found := j.lookup(id, e); found {
			if b == nil {
				return nil, storage.ErrNotFound
			}
			return b, nil
		}
	}
	return e, err
}
