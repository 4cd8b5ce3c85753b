package federation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/storage"
)

// TrustedConfig is the trusted-key part of the configuration.
type TrustedConfig struct {
	Enabled         bool          // SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED
	MaxJWKProps     int           // SVC_IAM_TRUSTED_KEY_MAX_JWK_PROPERTIES
	MaxPerTenant    int           // SVC_IAM_TRUSTED_KEY_MAX_PER_TENANT, 0 = unbounded
	DefaultValidity time.Duration // SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS
	Issuer          string        // SVC_JWT_ISSUER: the iss of keys without issuers
	Audience        string        // SVC_JWT_AUDIENCE; empty = no aud check
	// ReconcileInterval is SVC_AUTH_CACHE_RECONCILE_INTERVAL.
	ReconcileInterval time.Duration
	Log               *slog.Logger
}

// TrustedKeys administers a tenant's trusted keys and verifies tokens they
// signed. Admin operations decide against the store; verification reads a
// snapshot refreshed after every local write and by the reconcile loop.
type TrustedKeys struct {
	cfg   TrustedConfig
	store storage.TrustedKeys
	now   func() time.Time

	refreshMu sync.Mutex // serialises refreshes so an older read never lands last
	snap      atomic.Pointer[trustedSnapshot]
	health    reconcileHealth
	changed   changeHook
}

// OnChange registers fn to run whenever the set of usable trusted keys
// changes (a local write or a reconcile that saw another node's write).
func (t *TrustedKeys) OnChange(fn func()) { t.changed.set(fn) }

// NewTrustedKeys builds the service; call Refresh (or Run) before verifying.
func NewTrustedKeys(cfg TrustedConfig, store storage.TrustedKeys) *TrustedKeys {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.DefaultValidity <= 0 {
		cfg.DefaultValidity = 365 * 24 * time.Hour
	}
	t := &TrustedKeys{cfg: cfg, store: store, now: time.Now}
	t.snap.Store(&trustedSnapshot{byKID: map[string]*trustedEntry{}})
	t.health.init(cfg.ReconcileInterval)
	return t
}

// Enabled reports whether registration is switched on.
func (t *TrustedKeys) Enabled() bool { return t.cfg.Enabled }

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// CheckKeyID validates a trusted-key id (path or body).
func CheckKeyID(id string) error {
	if !keyIDPattern.MatchString(id) {
		return badRequest("invalid keyId format", apierr.P("parameter", "keyId"))
	}
	return nil
}

func (t *TrustedKeys) gate() error {
	if !t.cfg.Enabled {
		return apierr.New(apierr.FeatureDisabled, "trusted-key registration is disabled")
	}
	return nil
}

func notFoundKey() error { return apierr.New(apierr.TrustedKeyNotFound, "trusted key not found") }

// TrustedKeyRegistration is the body of POST /oauth/keys/trusted.
type TrustedKeyRegistration struct {
	KeyID                    string          `json:"keyId"`
	JWK                      json.RawMessage `json:"jwk"`
	Audience                 string          `json:"audience"`
	Issuers                  *[]string       `json:"issuers"`
	ValidFrom                *time.Time      `json:"validFrom"`
	ValidTo                  *time.Time      `json:"validTo"`
	InvalidatePrevious       bool            `json:"invalidatePrevious"`
	InvalidateGracePeriodSec *int64          `json:"invalidateGracePeriodSec"`
}

// TrustedKeyView is the response shape of a trusted key.
type TrustedKeyView struct {
	KeyID         string          `json:"keyId"`
	LegalEntityID string          `json:"legalEntityId"`
	JWK           json.RawMessage `json:"jwk"`
	Audience      string          `json:"audience"`
	Active        bool            `json:"active"`
	ValidFrom     time.Time       `json:"validFrom"`
	ValidTo       time.Time       `json:"validTo"`
	Issuers       *[]string       `json:"issuers,omitempty"`
}

func viewOf(k *storage.TrustedKey) TrustedKeyView {
	v := TrustedKeyView{KeyID: k.KID, LegalEntityID: k.Tenant, JWK: json.RawMessage(k.JWK), Audience: k.Audience,
		Active: k.Active, ValidFrom: k.ValidFrom.UTC(), ValidTo: k.ValidTo.UTC()}
	if k.Issuers != nil {
		iss := k.Issuers
		v.Issuers = &iss
	}
	return v
}

func checkGrace(g *int64) (time.Duration, error) {
	if g == nil {
		return 0, nil
	}
	if *g < 0 || *g > MaxGraceSec {
		return 0, badRequest(fmt.Sprintf("grace period must be between 0 and %d seconds", MaxGraceSec))
	}
	return time.Duration(*g) * time.Second, nil
}

func checkStringList(field string, l []string) error {
	if len(l) > 10 {
		return badRequest(field + " may hold at most 10 entries")
	}
	for _, s := range l {
		if s == "" || len(s) > 1000 {
			return badRequest(field + " entries must be 1 to 1000 characters")
		}
	}
	return nil
}

// Register validates and stores a key for tenant (upsert of the same
// tenant's keyId, 409 for another tenant's).
func (t *TrustedKeys) Register(ctx context.Context, tenant string, r *TrustedKeyRegistration) (TrustedKeyView, error) {
	if err := t.gate(); err != nil {
		return TrustedKeyView{}, err
	}
	if len(r.JWK) == 0 || string(r.JWK) == "null" {
		return TrustedKeyView{}, badRequest("jwk is required")
	}
	if r.KeyID == "" {
		// A bare payload is a JWK with an optional validTo (docs/decisions/0009-trusted-keys.md): its kid
		// names the key when keyId is left out.
		var k struct {
			Kid string `json:"kid"`
		}
		_ = json.Unmarshal(r.JWK, &k)
		r.KeyID = k.Kid
	}
	if err := CheckKeyID(r.KeyID); err != nil {
		return TrustedKeyView{}, err
	}
	if _, err := ParseTrustedJWK(r.JWK, t.cfg.MaxJWKProps, r.KeyID); err != nil {
		return TrustedKeyView{}, err
	}
	if r.Audience == "" {
		r.Audience = "client"
	}
	if r.Audience != "client" && r.Audience != "human" {
		return TrustedKeyView{}, badRequest("invalid audience", apierr.P("parameter", "audience"))
	}
	var issuers []string
	if r.Issuers != nil {
		issuers = append([]string{}, (*r.Issuers)...)
		if err := checkStringList("issuers", issuers); err != nil {
			return TrustedKeyView{}, err
		}
	}
	now := t.now().UTC()
	from := now
	if r.ValidFrom != nil && !r.ValidFrom.IsZero() {
		from = r.ValidFrom.UTC()
	}
	to := from.Add(t.cfg.DefaultValidity)
	if r.ValidTo != nil && !r.ValidTo.IsZero() {
		to = r.ValidTo.UTC()
	}
	if !to.After(from) {
		return TrustedKeyView{}, badRequest("validTo must be after validFrom")
	}
	grace, err := checkGrace(r.InvalidateGracePeriodSec)
	if err != nil {
		return TrustedKeyView{}, err
	}
	jwkCompact, err := compactJSON(r.JWK)
	if err != nil {
		return TrustedKeyView{}, badRequest("jwk must be a JSON object")
	}
	k := &storage.TrustedKey{KID: r.KeyID, Tenant: tenant, JWK: jwkCompact, Audience: r.Audience, Issuers: issuers,
		Active: true, ValidFrom: from, ValidTo: to, CreatedAt: now, UpdatedAt: now}
	opt := storage.TrustedKeyPut{Cap: t.cfg.MaxPerTenant, Now: now}
	if r.InvalidatePrevious {
		until := now.Add(grace)
		opt.RetireOthersUntil = &until
	}
	switch err := t.store.PutTrustedKey(ctx, k, opt); {
	case errors.Is(err, storage.ErrOwnedByOtherTenant):
		return TrustedKeyView{}, apierr.New(apierr.KeyOwnedByDifferentTenant, "keyId is registered by a different tenant", apierr.P("keyId", r.KeyID))
	case errors.Is(err, storage.ErrCapReached):
		return TrustedKeyView{}, apierr.New(apierr.TrustedKeyCapReached, fmt.Sprintf("the tenant already holds %d usable trusted keys", t.cfg.MaxPerTenant),
			apierr.P("cap", t.cfg.MaxPerTenant))
	case err != nil:
		return TrustedKeyView{}, fmt.Errorf("storing trusted key: %w", err)
	}
	t.refreshAfterWrite(ctx)
	return viewOf(k), nil
}

func compactJSON(raw []byte) ([]byte, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, errors.New("not an object")
	}
	return json.Marshal(v)
}

// List returns tenant's keys, inactive and expired ones included.
func (t *TrustedKeys) List(ctx context.Context, tenant string) ([]TrustedKeyView, error) {
	if err := t.gate(); err != nil {
		return nil, err
	}
	ks, err := t.store.ListTrustedKeys(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing trusted keys: %w", err)
	}
	out := make([]TrustedKeyView, 0, len(ks))
	for _, k := range ks {
		out = append(out, viewOf(k))
	}
	return out, nil
}

// Invalidate stops a key signing; tokens keep verifying for the grace
// period. Invalidation never extends a key's life.
func (t *TrustedKeys) Invalidate(ctx context.Context, tenant, kid string, graceSec *int64) error {
	if err := t.gate(); err != nil {
		return err
	}
	if err := CheckKeyID(kid); err != nil {
		return err
	}
	grace, err := checkGrace(graceSec)
	if err != nil {
		return err
	}
	now := t.now().UTC()
	_, err = t.store.UpdateTrustedKey(ctx, tenant, kid, func(k *storage.TrustedKey, _ []*storage.TrustedKey) error {
		k.Active = false
		if until := now.Add(grace); until.Before(k.ValidTo) {
			k.ValidTo = until
		}
		k.UpdatedAt = now
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return notFoundKey()
	}
	if err != nil {
		return fmt.Errorf("invalidating trusted key: %w", err)
	}
	t.refreshAfterWrite(ctx)
	return nil
}

// Reactivation is the body of POST …/reactivate.
type Reactivation struct {
	ValidFrom *time.Time `json:"validFrom"`
	ValidTo   *time.Time `json:"validTo"`
}

// Reactivate turns a key active again with a fresh window; validTo is
// required so a reactivated key never lives forever.
func (t *TrustedKeys) Reactivate(ctx context.Context, tenant, kid string, r *Reactivation) (TrustedKeyView, error) {
	if err := t.gate(); err != nil {
		return TrustedKeyView{}, err
	}
	if err := CheckKeyID(kid); err != nil {
		return TrustedKeyView{}, err
	}
	now := t.now().UTC()
	if r == nil || r.ValidTo == nil || r.ValidTo.IsZero() {
		return TrustedKeyView{}, badRequest("validTo required")
	}
	to := r.ValidTo.UTC()
	from := now
	if r.ValidFrom != nil && !r.ValidFrom.IsZero() {
		from = r.ValidFrom.UTC()
	}
	if !to.After(now) {
		return TrustedKeyView{}, badRequest("validTo must be in the future")
	}
	if !to.After(from) {
		return TrustedKeyView{}, badRequest("validTo must be > validFrom")
	}
	k, err := t.store.UpdateTrustedKey(ctx, tenant, kid, func(k *storage.TrustedKey, others []*storage.TrustedKey) error {
		if c := t.cfg.MaxPerTenant; c > 0 && !k.Usable(now) {
			usable := 0
			for _, o := range others {
				if o.Usable(now) {
					usable++
				}
			}
			if usable >= c {
				return apierr.New(apierr.TrustedKeyCapReached, fmt.Sprintf("the tenant already holds %d usable trusted keys", c), apierr.P("cap", c))
			}
		}
		k.Active, k.ValidFrom, k.ValidTo, k.UpdatedAt = true, from, to, now
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return TrustedKeyView{}, notFoundKey()
	}
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return TrustedKeyView{}, err
		}
		return TrustedKeyView{}, fmt.Errorf("reactivating trusted key: %w", err)
	}
	t.refreshAfterWrite(ctx)
	return viewOf(k), nil
}

// Delete removes a key.
func (t *TrustedKeys) Delete(ctx context.Context, tenant, kid string) error {
	if err := t.gate(); err != nil {
		return err
	}
	if err := CheckKeyID(kid); err != nil {
		return err
	}
	err := t.store.DeleteTrustedKey(ctx, tenant, kid)
	if errors.Is(err, storage.ErrNotFound) {
		return notFoundKey()
	}
	if err != nil {
		return fmt.Errorf("deleting trusted key: %w", err)
	}
	t.refreshAfterWrite(ctx)
	return nil
}
