// Package idempotency implements the Idempotency-Key header of svc's
// writes (docs/decisions/0040-idempotency-key.md), after the IETF httpapi
// draft: the first request of a key runs and its answer is stored with the
// key, in the transaction of the write; a repeat with the same request
// within the retention gets that answer again, one with another request
// IDEMPOTENCY_KEY_REUSED (422), one while the first still runs
// IDEMPOTENCY_CONFLICT (409). Keys are per tenant.
//
// The adapter reads the header and writes the replay marker; the domain
// package that writes (entity) puts the claim's stamp on each of its
// transactions; this package decides and keeps the keys.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
)

// MaxKeyLen bounds a key: longer ones are refused (400).
const MaxKeyLen = 255

// Defaults of Options.
const (
	DefaultRetention = 24 * time.Hour
	// DefaultLease bounds how long a reservation whose attempt committed
	// nothing keeps the key from others (the node running it died); each
	// commit of the attempt extends it.
	DefaultLease = 5 * time.Minute
)

// Options configure a Service.
type Options struct {
	// Retention is how long a finished key answers repeats
	// (SVC_IDEMPOTENCY_RETENTION); 0 means DefaultRetention.
	Retention time.Duration
	// Lease is DefaultLease when 0.
	Lease time.Duration
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
	// Reserved, when set, is called after a key was reserved and before
	// its request runs: tests hold a request in flight with it.
	Reserved func(ctx context.Context, tenant, key string)
}

// Service decides what a keyed request does.
type Service struct {
	store storage.IdempotencyKeys
	o     Options
}

// New returns the service over store.
func New(store storage.IdempotencyKeys, o Options) *Service {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{store: store, o: o}
}

// Retention is the configured retention.
func (s *Service) Retention() time.Duration { return s.o.Retention }

// CheckKey refuses a key that is empty, longer than MaxKeyLen or holds
// anything but visible ASCII (the draft's key is a structured-header
// string; svc takes its characters as sent).
func CheckKey(key string) error {
	bad := len(key) == 0 || len(key) > MaxKeyLen
	for i := 0; i < len(key) && !bad; i++ {
		bad = key[i] < 0x20 || key[i] > 0x7e
	}
	if bad {
		return apierr.New(apierr.BadRequest, "Idempotency-Key must be 1 to "+strconv.Itoa(MaxKeyLen)+" visible ASCII characters",
			apierr.P("parameter", "Idempotency-Key"))
	}
	return nil
}

// NewHash starts the fingerprint of a request: its method and path, then
// its body written into the hash (a streamed body as it is read).
func NewHash(method, path string) hash.Hash {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	return h
}

// Fingerprint is the fingerprint of a request whose body is at hand.
func Fingerprint(method, path string, body []byte) []byte {
	h := NewHash(method, path)
	h.Write(body)
	return h.Sum(nil)
}

// Replay is the stored answer of a key's first request.
type Replay struct {
	Status int
	Body   []byte
}

// Request is a keyed request as Begin sees it.
type Request struct {
	Tenant string
	Key    string
	// Fingerprint of the request; nil when its body is streamed and
	// hashed as it is read (then Later gives it, reading the body, when
	// a stored answer must be compared).
	Fingerprint []byte
	Later       func() ([]byte, error)
}

// Begin reserves the key for the request, or answers it: a *Replay of
// the first request's answer, or IDEMPOTENCY_CONFLICT /
// IDEMPOTENCY_KEY_REUSED. With a claim, the caller runs the request with
// WithClaim and ends it with Claim.Complete or Claim.Release.
func (s *Service) Begin(ctx context.Context, r Request) (*Claim, *Replay, error) {
	owner, err := uuid.NewRandom()
	if err != nil {
		return nil, nil, err
	}
	now := s.o.Now()
	rec := &storage.KeyRecord{Tenant: r.Tenant, Key: r.Key, Fingerprint: r.Fingerprint, Owner: owner,
		LeaseUntil: now.Add(s.o.Lease), CreatedAt: now}
	cur, err := s.store.Reserve(ctx, rec, now.Add(-s.o.Retention))
	if err != nil {
		return nil, nil, fmt.Errorf("idempotency: %w", err)
	}
	if cur == nil {
		c := &Claim{s: s, tenant: r.Tenant, key: r.Key, owner: owner}
		if s.o.Reserved != nil {
			s.o.Reserved(ctx, r.Tenant, r.Key)
		}
		return c, nil, nil
	}
	answered := cur.Done || (cur.Status != 0 && cur.LeaseUntil.Before(now))
	fp := r.Fingerprint
	if fp == nil && answered && len(cur.Fingerprint) > 0 && r.Later != nil {
		if fp, err = r.Later(); err != nil {
			return nil, nil, err
		}
	}
	if fp != nil && len(cur.Fingerprint) > 0 && !bytes.Equal(fp, cur.Fingerprint) {
		return nil, nil, apierr.New(apierr.IdempotencyKeyReused,
			"Idempotency-Key "+strconv.Quote(r.Key)+" was used for another request", apierr.P("idempotencyKey", r.Key))
	}
	if !answered {
		return nil, nil, apierr.New(apierr.IdempotencyConflict,
			"a request with Idempotency-Key "+strconv.Quote(r.Key)+" is still being processed", apierr.P("idempotencyKey", r.Key))
	}
	return nil, &Replay{Status: cur.Status, Body: cur.Body}, nil
}

// Sweep deletes the keys past the retention; cmd/svc runs it
// periodically.
func (s *Service) Sweep(ctx context.Context) (int64, error) {
	return s.store.SweepKeys(ctx, s.o.Now().Add(-s.o.Retention))
}

// Claim is the hold of one attempt on a key.
type Claim struct {
	s      *Service
	tenant string
	key    string
	owner  [16]byte
	// Encode turns the progress of the request (a value of the writing
	// package: what has committed so far, with the transaction being
	// committed) into the answer the adapter would send for it. The
	// adapter sets it before the request runs.
	Encode func(progress any) (status int, body []byte)
}

// Key is the claimed key.
func (c *Claim) Key() string { return c.key }

// Stamp is the key's part of a transaction of the request whose progress,
// once it commits, is progress: the answer so far, so a crash after the
// commit still answers repeats with what committed.
func (c *Claim) Stamp(progress any) *storage.KeyStamp {
	st := &storage.KeyStamp{Key: c.key, Owner: c.owner, LeaseUntil: c.s.o.Now().Add(c.s.o.Lease)}
	if c.Encode != nil {
		st.Status, st.Body = c.Encode(progress)
	}
	return st
}

// ErrLost: the attempt's lease ended and another attempt took the key.
var ErrLost = errors.New("idempotency: the key was taken over")

// Complete stores the request's final answer (and its fingerprint when
// it was streamed) and ends the attempt. It runs after the request, on a
// context that outlives the client.
func (c *Claim) Complete(ctx context.Context, fp []byte, status int, body []byte) error {
	ok, err := c.s.store.Complete(context.WithoutCancel(ctx), c.tenant, c.key, c.owner, fp, status, body)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLost
	}
	return nil
}

// Release frees the key of an attempt that committed nothing, so a retry
// runs again.
func (c *Claim) Release(ctx context.Context) error {
	return c.s.store.Release(context.WithoutCancel(ctx), c.tenant, c.key, c.owner)
}

type claimKey struct{}

// WithClaim returns ctx carrying c to the writing package.
func WithClaim(ctx context.Context, c *Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// ClaimFrom returns the claim ctx carries, or nil.
func ClaimFrom(ctx context.Context) *Claim {
	c, _ := ctx.Value(claimKey{}).(*Claim)
	return c
}
