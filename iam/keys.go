package iam

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"svc/platform/apierr"
	"svc/storage"
)

// Keypair audiences.
const (
	AudienceClient = "client"
	AudienceHuman  = "human"
)

// MaxGracePeriod caps invalidation grace periods (366 days in seconds).
const MaxGracePeriod = 31622400 * time.Second

// RingKey is one parsed keypair of a KeyRing.
type RingKey struct {
	KID       string
	Audience  string
	Public    *rsa.PublicKey
	Private   *rsa.PrivateKey // nil when the sealed key does not open
	Active    bool
	ValidFrom time.Time
	ValidTo   time.Time
}

// Verifies reports whether tokens signed by k verify at now: inside
// validFrom ≤ now < validTo, active or in grace (docs/decisions/0006-tokens-keypairs-clients.md).
func (k *RingKey) Verifies(now time.Time) bool {
	return !now.Before(k.ValidFrom) && now.Before(k.ValidTo)
}

// KeyRing is an immutable snapshot of every keypair, parsed once, read
// lock-free by the verifier and the token endpoint.
type KeyRing struct {
	byKID map[string]*RingKey
	keys  []*RingKey // sorted by kid
	// LoadedAt is when the snapshot was read from storage.
	LoadedAt time.Time
	// Fingerprint changes whenever a key, its window or its state does, so
	// caches of verified tokens know when to drop their entries.
	Fingerprint uint64
}

// Lookup returns the key of kid if it verifies at now.
func (r *KeyRing) Lookup(kid string, now time.Time) (*RingKey, bool) {
	k, ok := r.byKID[kid]
	if !ok || !k.Verifies(now) {
		return nil, false
	}
	return k, true
}

// Signer is the key that signs tokens of aud at now: active, inside its
// window, private half available; the greatest validFrom wins, ties go to
// the greater kid (docs/decisions/0006-tokens-keypairs-clients.md).
func (r *KeyRing) Signer(aud string, now time.Time) *RingKey {
	var best *RingKey
	for _, k := range r.keys {
		if !k.Active || k.Audience != aud || k.Private == nil || !k.Verifies(now) {
			continue
		}
		if best == nil || k.ValidFrom.After(best.ValidFrom) || k.ValidFrom.Equal(best.ValidFrom) && k.KID > best.KID {
			best = k
		}
	}
	return best
}

// Published are the keys JWKS lists: exactly those that verify at now.
func (r *KeyRing) Published(now time.Time) []*RingKey {
	var out []*RingKey
	for _, k := range r.keys {
		if k.Verifies(now) {
			out = append(out, k)
		}
	}
	return out
}

// Keys manages signing keypairs: the bootstrap keypair derived from
// SVC_JWT_SIGNING_KEY, runtime keypairs sealed in storage, and the KeyRing
// snapshot every verification reads.
type Keys struct {
	store       storage.Keypairs
	signing     *rsa.PrivateKey
	bootKID     string
	bootAud     string
	validity    time.Duration
	seal        *sealer
	now         func() time.Time
	ring        atomic.Pointer[KeyRing]
	mu          sync.Mutex // guards opened
	opened      map[string]*rsa.PrivateKey
	reloadGuard sync.Mutex // serialises Reload so an older snapshot never replaces a newer one
	// OnChange runs after every successful reload that follows a local
	// mutation, so caches of verified tokens drop what may no longer hold.
	OnChange func()
	// PreviousBootstrapGrace is how long the bootstrap keypair of a former
	// SVC_JWT_SIGNING_KEY keeps verifying after a restart with a new key:
	// set it to the token lifetime so a planned rotation breaks no issued
	// token; 0 cuts the old key off at once (a compromised key).
	PreviousBootstrapGrace time.Duration
}

// NewKeys builds the keypair manager. bootstrapAudience is client or human.
func NewKeys(store storage.Keypairs, signing *rsa.PrivateKey, bootstrapAudience string, validityDays int) (*Keys, error) {
	if store == nil || signing == nil {
		return nil, errors.New("iam: keypairs need a store and a signing key")
	}
	if bootstrapAudience != AudienceClient && bootstrapAudience != AudienceHuman {
		return nil, fmt.Errorf("iam: bootstrap audience %q is neither client nor human", bootstrapAudience)
	}
	kid, err := KeyID(&signing.PublicKey)
	if err != nil {
		return nil, err
	}
	s, err := newSealer(signing)
	if err != nil {
		return nil, err
	}
	k := &Keys{store: store, signing: signing, bootKID: kid, bootAud: bootstrapAudience,
		validity: time.Duration(validityDays) * 24 * time.Hour, seal: s, now: time.Now,
		opened: map[string]*rsa.PrivateKey{}}
	k.ring.Store(&KeyRing{byKID: map[string]*RingKey{}})
	return k, nil
}

// SetClock replaces the clock (tests).
func (k *Keys) SetClock(now func() time.Time) { k.now = now }

// BootstrapKID is the kid of the configured signing key.
func (k *Keys) BootstrapKID() string { return k.bootKID }

// Ring is the current snapshot.
func (k *Keys) Ring() *KeyRing { return k.ring.Load() }

// Bootstrap makes sure the bootstrap keypair has a record, then loads the
// ring. An existing record keeps its lifecycle state (invalidated, retired,
// reactivated): a restart must not resurrect a key an administrator
// removed.
func (k *Keys) Bootstrap(ctx context.Context) error {
	_, err := k.store.GetKeypair(ctx, k.bootKID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		spki, err := x509.MarshalPKIXPublicKey(&k.signing.PublicKey)
		if err != nil {
			return fmt.Errorf("iam: encoding the bootstrap key: %w", err)
		}
		now := k.now().UTC()
		rec := &storage.Keypair{KID: k.bootKID, Audience: k.bootAud, Algorithm: "RS256", PublicSPKI: spki,
			Active: true, ValidFrom: now, ValidTo: now.Add(k.validity), Bootstrap: true, CreatedAt: now}
		if err := k.store.CreateKeypair(ctx, rec, nil); err != nil && !errors.Is(err, storage.ErrExists) {
			return fmt.Errorf("iam: storing the bootstrap keypair: %w", err)
		}
	case err != nil:
		return fmt.Errorf("iam: reading the bootstrap keypair: %w", err)
	}
	if err := k.retirePreviousBootstraps(ctx); err != nil {
		return err
	}
	return k.Reload(ctx)
}

// retirePreviousBootstraps ends the window of bootstrap keypairs derived
// from an earlier signing key: rotating SVC_JWT_SIGNING_KEY must not leave
// the old key verifying for the rest of its validity.
func (k *Keys) retirePreviousBootstraps(ctx context.Context) error {
	recs, err := k.store.ListKeypairs(ctx)
	if err != nil {
		return fmt.Errorf("iam: listing keypairs: %w", err)
	}
	until := k.now().UTC().Add(k.PreviousBootstrapGrace)
	for _, r := range recs {
		if !r.Bootstrap || r.KID == k.bootKID || r.Retired || !r.Active && !until.Before(r.ValidTo) {
			continue
		}
		_, err := k.store.UpdateKeypair(ctx, r.KID, func(r *storage.Keypair) error {
			r.Active = false
			if until.Before(r.ValidTo) {
				r.ValidTo = until
			}
			return nil
		})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("iam: retiring a former bootstrap keypair: %w", err)
		}
	}
	return nil
}

// Reload reads every keypair from storage and swaps the snapshot.
func (k *Keys) Reload(ctx context.Context) error {
	k.reloadGuard.Lock()
	defer k.reloadGuard.Unlock()
	at := k.now()
	recs, err := k.store.ListKeypairs(ctx)
	if err != nil {
		return fmt.Errorf("iam: loading keypairs: %w", err)
	}
	ring := &KeyRing{byKID: make(map[string]*RingKey, len(recs)), LoadedAt: at}
	for _, r := range recs {
		if r.Retired || r.Algorithm != "RS256" {
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(r.PublicSPKI)
		if err != nil {
			continue // a damaged record verifies nothing
		}
		rpub, ok := pub.(*rsa.PublicKey)
		if !ok {
			continue
		}
		rk := &RingKey{KID: r.KID, Audience: r.Audience, Public: rpub, Active: r.Active, ValidFrom: r.ValidFrom, ValidTo: r.ValidTo}
		rk.Private = k.privateOf(r, rpub)
		ring.byKID[r.KID] = rk
		ring.keys = append(ring.keys, rk)
	}
	sort.Slice(ring.keys, func(i, j int) bool { return ring.keys[i].KID < ring.keys[j].KID })
	d := xxhash.New()
	for _, rk := range ring.keys {
		fmt.Fprintf(d, "%s|%s|%t|%d|%d|%t\n", rk.KID, rk.Audience, rk.Active, rk.ValidFrom.UnixNano(), rk.ValidTo.UnixNano(), rk.Private != nil)
	}
	ring.Fingerprint = d.Sum64()
	k.ring.Store(ring)
	return nil
}

// privateOf opens a record's private half once and remembers it; a sealed
// key from another signing key stays closed and that keypair only verifies.
func (k *Keys) privateOf(r *storage.Keypair, pub *rsa.PublicKey) *rsa.PrivateKey {
	if r.Bootstrap || r.KID == k.bootKID {
		if k.signing.PublicKey.Equal(pub) {
			return k.signing
		}
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.opened[r.KID]; ok {
		return p
	}
	if r.PrivateSealed == nil {
		return nil
	}
	p, err := k.seal.open(r.KID, r.PrivateSealed)
	if err != nil || !p.PublicKey.Equal(pub) {
		return nil
	}
	k.opened[r.KID] = p
	return p
}

func (k *Keys) changed(ctx context.Context) error {
	err := k.Reload(ctx)
	if k.OnChange != nil {
		k.OnChange()
	}
	return err
}

// IssueRequest is the body of POST /oauth/keys/keypair.
type IssueRequest struct {
	Algorithm         string
	Audience          string
	ValidFrom         *time.Time
	ValidTo           *time.Time
	InvalidateCurrent bool
	GracePeriod       time.Duration
}

func keypairNotFound() *apierr.Error { return notFound(apierr.KeypairNotFound, "key pair not found") }

// Issue creates an RSA-2048 keypair, which becomes the signer of its
// audience at once; with InvalidateCurrent the other active keys of the
// audience retire after the grace period, atomically.
func (k *Keys) Issue(ctx context.Context, req IssueRequest) (*storage.Keypair, error) {
	if req.Algorithm == "" {
		req.Algorithm = "RS256"
	}
	if req.Algorithm != "RS256" {
		return nil, apierr.New(apierr.UnsupportedAlgorithm, "only RS256 is supported", apierr.P("parameter", "algorithm"))
	}
	if req.Audience != AudienceClient && req.Audience != AudienceHuman {
		return nil, badParam("audience", "invalid audience: must be human or client")
	}
	now := k.now().UTC()
	from := now
	if req.ValidFrom != nil {
		from = req.ValidFrom.UTC()
	}
	to := from.Add(k.validity)
	if req.ValidTo != nil {
		to = req.ValidTo.UTC()
	}
	if !to.After(from) {
		return nil, badParam("validTo", "validTo must be after validFrom")
	}
	if req.GracePeriod < 0 || req.GracePeriod > MaxGracePeriod {
		return nil, badParam("invalidateGracePeriodSec", "grace period must be between 0 and 31622400 seconds")
	}
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("iam: generating a keypair: %w", err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	kid := hex.EncodeToString(b[:])
	spki, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("iam: encoding a public key: %w", err)
	}
	sealed, err := k.seal.seal(kid, priv)
	if err != nil {
		return nil, err
	}
	rec := &storage.Keypair{KID: kid, Audience: req.Audience, Algorithm: "RS256", PublicSPKI: spki, PrivateSealed: sealed,
		Active: true, ValidFrom: from, ValidTo: to, CreatedAt: now}
	var retire *time.Time
	if req.InvalidateCurrent {
		until := now.Add(req.GracePeriod)
		retire = &until
	}
	if err := k.store.CreateKeypair(ctx, rec, retire); err != nil {
		return nil, fmt.Errorf("iam: storing a keypair: %w", err)
	}
	k.mu.Lock()
	k.opened[kid] = priv
	k.mu.Unlock()
	return rec, k.changed(ctx)
}

// Current is the active keypair that signs for aud now, read from storage.
func (k *Keys) Current(ctx context.Context, aud string) (*storage.Keypair, error) {
	if aud == "" {
		aud = AudienceClient
	}
	if aud != AudienceClient && aud != AudienceHuman {
		return nil, badParam("audience", "invalid audience: must be human or client")
	}
	recs, err := k.store.ListKeypairs(ctx)
	if err != nil {
		return nil, fmt.Errorf("iam: listing keypairs: %w", err)
	}
	now := k.now()
	var best *storage.Keypair
	for _, r := range recs {
		if r.Retired || !r.Active || r.Audience != aud || now.Before(r.ValidFrom) || !now.Before(r.ValidTo) {
			continue
		}
		if best == nil || r.ValidFrom.After(best.ValidFrom) || r.ValidFrom.Equal(best.ValidFrom) && r.KID > best.KID {
			best = r
		}
	}
	if best == nil {
		return nil, notFound(apierr.KeypairNotFound, "no active key pair for audience")
	}
	return best, nil
}

// Invalidate stops kid signing at once; its tokens verify until now+grace.
// validTo never moves later.
func (k *Keys) Invalidate(ctx context.Context, kid string, grace time.Duration) error {
	if grace < 0 || grace > MaxGracePeriod {
		return badParam("gracePeriodSec", "grace period must be between 0 and 31622400 seconds")
	}
	until := k.now().UTC().Add(grace)
	_, err := k.store.UpdateKeypair(ctx, kid, func(r *storage.Keypair) error {
		if r.Retired {
			return storage.ErrNotFound
		}
		r.Active = false
		if until.Before(r.ValidTo) {
			r.ValidTo = until
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return keypairNotFound()
	}
	if err != nil {
		return fmt.Errorf("iam: invalidating a keypair: %w", err)
	}
	return k.changed(ctx)
}

// Reactivate makes kid active again with a fresh window; validTo is
// required and must lie in the future (no "zombie" keys without an end).
func (k *Keys) Reactivate(ctx context.Context, kid string, from *time.Time, to time.Time) (*storage.Keypair, error) {
	now := k.now().UTC()
	f := now
	if from != nil {
		f = from.UTC()
	}
	if to.IsZero() {
		return nil, badParam("validTo", "validTo required")
	}
	if !to.After(now) {
		return nil, badParam("validTo", "validTo must be in the future")
	}
	if !to.After(f) {
		return nil, badParam("validTo", "validTo must be > validFrom")
	}
	rec, err := k.store.UpdateKeypair(ctx, kid, func(r *storage.Keypair) error {
		if r.Retired {
			return storage.ErrNotFound
		}
		r.Active, r.ValidFrom, r.ValidTo = true, f, to.UTC()
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, keypairNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("iam: reactivating a keypair: %w", err)
	}
	return rec, k.changed(ctx)
}

// Delete removes kid. The bootstrap keypair is retired instead, so a
// restart does not bring back a key an administrator deleted.
func (k *Keys) Delete(ctx context.Context, kid string) error {
	var err error
	if kid == k.bootKID {
		_, err = k.store.UpdateKeypair(ctx, kid, func(r *storage.Keypair) error {
			if r.Retired {
				return storage.ErrNotFound
			}
			r.Retired, r.Active = true, false
			return nil
		})
	} else {
		err = k.store.DeleteKeypair(ctx, kid)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return keypairNotFound()
	}
	if err != nil {
		return fmt.Errorf("iam: deleting a keypair: %w", err)
	}
	return k.changed(ctx)
}

// ExpiryWarning names every signing key in its final 30 days, for the
// startup banner.
func (k *Keys) ExpiryWarning(now time.Time) []string {
	var out []string
	for _, rk := range k.Ring().keys {
		if !rk.Active || !rk.Verifies(now) {
			continue
		}
		if left := rk.ValidTo.Sub(now); left < 30*24*time.Hour {
			out = append(out, fmt.Sprintf("signing keypair %s (%s) expires %s, in %d days; rotate it with POST /oauth/keys/keypair",
				rk.KID, rk.Audience, rk.ValidTo.UTC().Format(time.RFC3339), int(left.Hours()/24)))
		}
	}
	return out
}
