package federation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/platform/netguard"
	"svc/storage"
)

// ProvidersConfig is the OIDC part of the configuration.
type ProvidersConfig struct {
	RolesClaim   string // SVC_OIDC_ROLES_CLAIM
	RequireHTTPS bool   // SVC_OIDC_REQUIRE_HTTPS
	// Net carries SVC_OIDC_ALLOW_PRIVATE_NETWORKS and the three
	// SVC_OIDC_*_TIMEOUT_MS values (and, in tests, trusted roots).
	Net               netguard.Options
	ReconcileInterval time.Duration // SVC_AUTH_CACHE_RECONCILE_INTERVAL
	// JWKSTTL and NegativeTTL override the key-cache lifetimes (5 min, 2 s).
	JWKSTTL, NegativeTTL time.Duration
	Log                  *slog.Logger
}

// Providers administers OIDC provider registrations and verifies their
// tokens. Admin operations decide against the store; verification reads a
// snapshot of active providers with their discovery documents.
type Providers struct {
	cfg   ProvidersConfig
	store storage.OIDCProviders
	fetch *fetcher
	jwks  *jwksCache
	now   func() time.Time
	log   *slog.Logger

	refreshMu sync.Mutex
	snap      atomic.Pointer[providerSnapshot]
	disc      map[string]*discovered // by provider id; guarded by refreshMu
	// tried is when discovery last failed for a pending provider (guarded
	// by refreshMu): a provider that is down is retried once per
	// pendingRetry, so it cannot stall every write-triggered refresh.
	tried    map[string]time.Time
	health   reconcileHealth
	reloadMu sync.Mutex
	changed  changeHook
}

// OnChange registers fn to run whenever the set of trusted providers or
// their rules changes (a local write or a reconcile that saw another
// node's write).
func (p *Providers) OnChange(fn func()) { p.changed.set(fn) }

// discovered is a provider's installed discovery document, valid while the
// fields it was checked against are unchanged.
type discovered struct {
	uri, issuers string
	doc          *DiscoveryDoc
	// stamp is the record's UpdatedAt the document was checked against. A
	// newer stamp (PATCH, or a reload on any node) means: discover again
	// and refetch the keys.
	stamp time.Time
}

type liveProvider struct {
	rec *storage.OIDCProvider
	doc *DiscoveryDoc // nil while discovery is pending
}

type providerSnapshot struct{ list []*liveProvider } // active, by (tenant, uri, id)

// NewProviders builds the service. Close releases its caches.
func NewProviders(cfg ProvidersConfig, store storage.OIDCProviders) (*Providers, error) {
	if cfg.RolesClaim == "" {
		cfg.RolesClaim = "roles"
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	p := &Providers{cfg: cfg, store: store, now: time.Now, log: cfg.Log, disc: map[string]*discovered{}, tried: map[string]time.Time{}}
	p.fetch = &fetcher{client: netguard.NewClient(cfg.Net), requireHTTPS: cfg.RequireHTTPS}
	c, err := newJWKSCache(cfg.JWKSTTL, cfg.NegativeTTL, p.fetch.jwks)
	if err != nil {
		return nil, fmt.Errorf("creating the JWKS cache: %w", err)
	}
	p.jwks = c
	p.snap.Store(&providerSnapshot{})
	p.health.init(cfg.ReconcileInterval)
	return p, nil
}

// Close stops the key caches.
func (p *Providers) Close() { p.jwks.close() }

// ProviderRegistration is the body of POST /oauth/oidc/providers.
type ProviderRegistration struct {
	WellKnownConfigURI *string  `json:"wellKnownConfigUri"`
	Issuers            []string `json:"issuers"`
	ExpectedAudiences  []string `json:"expectedAudiences"`
	RolesClaim         *string  `json:"rolesClaim"`
}

// ProviderView is the response shape of a provider.
type ProviderView struct {
	ID                 string    `json:"id"`
	WellKnownConfigURI string    `json:"wellKnownConfigUri"`
	Active             bool      `json:"active"`
	CreatedAt          time.Time `json:"createdAt"`
	Issuers            []string  `json:"issuers,omitempty"`
	ExpectedAudiences  []string  `json:"expectedAudiences,omitempty"`
	RolesClaim         *string   `json:"rolesClaim,omitempty"`
}

func providerView(r *storage.OIDCProvider) ProviderView {
	return ProviderView{ID: r.ID, WellKnownConfigURI: r.WellKnownURI, Active: r.Active(), CreatedAt: r.CreatedAt.UTC(),
		Issuers: r.Issuers, ExpectedAudiences: r.Audiences, RolesClaim: r.RolesClaim}
}

// canonicalUUID is the only tenant form accepted for providers: lenient
// forms (upper case, braces, urn:uuid:) would bind under a different key
// than the tenant's own records.
var canonicalUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

const nilUUID = "00000000-0000-0000-0000-000000000000"

func checkTenant(tenant string) error {
	if !canonicalUUID.MatchString(tenant) || tenant == nilUUID {
		return apierr.New(apierr.OIDCInvalidTenant, "OIDC providers need a tenant id in canonical UUID form; move the tenant off a non-UUID id (such as default-tenant) first")
	}
	return nil
}

// CheckProviderID validates an {id} path parameter.
func CheckProviderID(id string) error {
	if !canonicalUUID.MatchString(strings.ToLower(id)) {
		return badRequest("invalid value for parameter 'id'", apierr.P("parameter", "id"), apierr.P("invalidValue", id))
	}
	return nil
}

func notFoundProvider() error {
	return apierr.New(apierr.OIDCProviderNotFound, "OIDC provider not found")
}

func (p *Providers) checkURI(ctx context.Context, raw *string) (string, error) {
	if raw == nil || *raw == "" {
		return "", badRequest("wellKnownConfigUri is required", apierr.P("parameter", "wellKnownConfigUri"))
	}
	s := *raw
	if len(s) > 1000 {
		return "", badRequest("wellKnownConfigUri is longer than 1000 characters")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", badRequest("wellKnownConfigUri is not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", badRequest("wellKnownConfigUri must be an http(s) URL")
	}
	if p.cfg.RequireHTTPS && u.Scheme != "https" {
		return "", badRequest("https required for wellKnownConfigUri (SVC_OIDC_REQUIRE_HTTPS)")
	}
	if u.Hostname() == "" {
		return "", badRequest("wellKnownConfigUri has no host")
	}
	if u.User != nil {
		return "", badRequest("wellKnownConfigUri must not carry credentials")
	}
	if err := netguard.CheckHost(ctx, p.cfg.Net, u.Hostname()); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return "", apierr.New(apierr.OIDCSSRFBlocked, "wellKnownConfigUri points at a blocked network range")
		}
		return "", badRequest("wellKnownConfigUri host does not resolve")
	}
	return s, nil
}

func checkRolesClaim(rc *string) error {
	if rc != nil && len(*rc) > 100 {
		return badRequest("rolesClaim is longer than 100 characters")
	}
	return nil
}

// sharing records, for the log, the other tenants' registrations of the
// URI being written. Registration never fails because another tenant
// registered the same identity provider (docs/decisions/0008-oidc-providers.md):
// tokens are routed by audience at verification, and an ambiguous token is
// refused there.
type sharing struct{ others []*storage.OIDCProvider }

// check is the store's sameURI callback; it keeps the last list it saw (the
// store may retry).
func (s *sharing) check(same []*storage.OIDCProvider) error {
	s.others = append(s.others[:0], same...)
	return nil
}

// overlaps reports whether tokens of one identity provider could fail to
// single out registration a or b: they list a common audience, or one of
// them lists none (a registration without audiences is never chosen when
// several registrations hold the token's key).
func overlaps(a, b []string) bool {
	return len(a) == 0 || len(b) == 0 || containsAny(a, b)
}

// logSharing writes the audit record of a registration of a URI other
// tenants registered too, and a warning naming the registrations whose
// audiences overlap with it.
func (p *Providers) logSharing(action string, rec *storage.OIDCProvider, others []*storage.OIDCProvider) {
	if len(others) == 0 {
		return
	}
	ids := make([]string, 0, len(others))
	tenants := make([]string, 0, len(others))
	var clash []string
	for _, o := range others {
		ids = append(ids, o.ID)
		tenants = append(tenants, o.Tenant)
		if overlaps(rec.Audiences, o.Audiences) {
			clash = append(clash, o.ID)
		}
	}
	p.log.Info("audit: OIDC provider URL registered by several tenants", "audit", true, "event", "oidc_provider_shared",
		"action", action, "tenant", rec.Tenant, "provider", rec.ID, "otherProviders", ids, "otherTenants", tenants,
		"expectedAudiences", rec.Audiences, "overlapping", len(clash) > 0)
	if len(clash) > 0 {
		p.log.Warn("OIDC provider shared between tenants with overlapping or missing expectedAudiences: a token whose audience does not single out one registration is refused (401); give every registration its own expectedAudiences",
			"tenant", rec.Tenant, "provider", rec.ID, "overlappingProviders", clash)
	}
}

// Register validates and stores a provider for tenant, then tries
// discovery; a provider that is down is registered anyway and stays
// pending until discovery succeeds.
func (p *Providers) Register(ctx context.Context, tenant string, r *ProviderRegistration) (ProviderView, error) {
	uri, err := p.checkURI(ctx, r.WellKnownConfigURI)
	if err != nil {
		return ProviderView{}, err
	}
	if err := checkStringList("issuers", r.Issuers); err != nil {
		return ProviderView{}, err
	}
	if err := checkStringList("expectedAudiences", r.ExpectedAudiences); err != nil {
		return ProviderView{}, err
	}
	if err := checkRolesClaim(r.RolesClaim); err != nil {
		return ProviderView{}, err
	}
	if err := checkTenant(tenant); err != nil {
		return ProviderView{}, err
	}
	now := p.now().UTC()
	rec := &storage.OIDCProvider{ID: uuid.NewString(), Tenant: tenant, WellKnownURI: uri,
		Issuers: nonEmpty(r.Issuers), Audiences: nonEmpty(r.ExpectedAudiences), RolesClaim: r.RolesClaim, CreatedAt: now, UpdatedAt: now}
	var sh sharing
	switch err := p.store.CreateProvider(ctx, rec, sh.check); {
	case errors.Is(err, storage.ErrExists):
		return ProviderView{}, apierr.New(apierr.OIDCProviderDuplicate, "this tenant already registered wellKnownConfigUri")
	case err != nil:
		if _, ok := apierr.As(err); ok {
			return ProviderView{}, err
		}
		return ProviderView{}, fmt.Errorf("storing OIDC provider: %w", err)
	}
	p.logSharing("register", rec, sh.others)
	p.refreshAfterWrite(ctx)
	return providerView(rec), nil
}

func nonEmpty(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return append([]string{}, l...)
}

// List returns tenant's providers.
func (p *Providers) List(ctx context.Context, tenant string, activeOnly bool) ([]ProviderView, error) {
	l, err := p.store.ListProviders(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing OIDC providers: %w", err)
	}
	out := make([]ProviderView, 0, len(l))
	for _, r := range l {
		if activeOnly && !r.Active() {
			continue
		}
		out = append(out, providerView(r))
	}
	return out, nil
}

// Patch applies a tri-state update: an absent member is unchanged; null
// (or [] for lists) clears it; a value sets it. wellKnownConfigUri cannot
// change. Validation runs before the lookup.
func (p *Providers) Patch(ctx context.Context, tenant, id string, body []byte) (ProviderView, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return ProviderView{}, badRequest("request body must be a JSON object")
	}
	type listPatch struct {
		set bool
		val []string
	}
	readList := func(name string) (listPatch, error) {
		raw, ok := m[name]
		if !ok {
			return listPatch{}, nil
		}
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			return listPatch{}, badRequest("invalid " + name + " field")
		}
		if err := checkStringList(name, l); err != nil {
			return listPatch{}, err
		}
		return listPatch{true, nonEmpty(l)}, nil
	}
	iss, err := readList("issuers")
	if err != nil {
		return ProviderView{}, err
	}
	aud, err := readList("expectedAudiences")
	if err != nil {
		return ProviderView{}, err
	}
	var rc *string
	rawRC, rcSet := m["rolesClaim"]
	if rcSet {
		if err := json.Unmarshal(rawRC, &rc); err != nil {
			return ProviderView{}, badRequest("invalid rolesClaim field")
		}
		if err := checkRolesClaim(rc); err != nil {
			return ProviderView{}, err
		}
	}
	var sh sharing
	rec, err := p.store.UpdateProvider(ctx, tenant, id, func(r *storage.OIDCProvider, same []*storage.OIDCProvider) error {
		_ = sh.check(same)
		if !r.Active() {
			return apierr.New(apierr.OIDCProviderInactive, "OIDC provider is invalidated; reactivate it first")
		}
		if iss.set {
			r.Issuers = iss.val
		}
		if aud.set {
			r.Audiences = aud.val
		}
		if rcSet {
			r.RolesClaim = rc
		}
		r.UpdatedAt = p.now().UTC()
		return nil
	})
	if err != nil {
		return ProviderView{}, p.mapErr(err, "updating")
	}
	if aud.set {
		p.logSharing("patch", rec, sh.others)
	}
	// The new UpdatedAt makes the refresh discover again and refetch keys.
	p.refreshAfterWrite(ctx)
	return providerView(rec), nil
}

func (p *Providers) mapErr(err error, what string) error {
	if errors.Is(err, storage.ErrNotFound) {
		return notFoundProvider()
	}
	if _, ok := apierr.As(err); ok {
		return err
	}
	return fmt.Errorf("%s OIDC provider: %w", what, err)
}

// Invalidate stops trusting a provider at once; idempotent.
func (p *Providers) Invalidate(ctx context.Context, tenant, id string) error {
	now := p.now().UTC()
	_, err := p.store.UpdateProvider(ctx, tenant, id, func(r *storage.OIDCProvider, _ []*storage.OIDCProvider) error {
		if r.InvalidatedAt == nil {
			r.InvalidatedAt = &now
			r.UpdatedAt = now
		}
		return nil
	})
	if err != nil {
		return p.mapErr(err, "invalidating")
	}
	p.refreshAfterWrite(ctx)
	return nil
}

// Reactivate resumes trust. With reactivateKeys the provider's keys are
// fetched afresh; without, cached keys are kept and only discovery runs.
func (p *Providers) Reactivate(ctx context.Context, tenant, id string, reactivateKeys bool) (ProviderView, error) {
	now := p.now().UTC()
	wasInactive := false
	rec, err := p.store.UpdateProvider(ctx, tenant, id, func(r *storage.OIDCProvider, _ []*storage.OIDCProvider) error {
		wasInactive = r.InvalidatedAt != nil
		if wasInactive {
			r.InvalidatedAt = nil
			r.UpdatedAt = now
		}
		return nil
	})
	if err != nil {
		return ProviderView{}, p.mapErr(err, "reactivating")
	}
	if !wasInactive {
		// Already active: no change (docs/decisions/0008-oidc-providers.md).
		return providerView(rec), nil
	}
	p.forget(id)
	p.refreshAfterWrite(ctx)
	if reactivateKeys {
		if lp := p.live(id); lp != nil && lp.doc != nil {
			if _, err := p.jwks.refetch(ctx, lp.doc.JWKSURI); err != nil {
				p.log.Warn("OIDC provider JWKS fetch failed on reactivate", "provider", id, "err", err)
			}
		}
	}
	return providerView(rec), nil
}

// Delete removes a provider.
func (p *Providers) Delete(ctx context.Context, tenant, id string) error {
	if err := p.store.DeleteProvider(ctx, tenant, id); err != nil {
		return p.mapErr(err, "deleting")
	}
	p.forget(id)
	p.refreshAfterWrite(ctx)
	return nil
}

// Reload re-fetches discovery and JWKS of every active provider,
// synchronously on this node; a provider whose fetch fails keeps its
// previous document and keys. It also stamps every active record, so the
// other nodes' reconcile loops see the change and re-fetch too (the
// operation is cluster-wide). Concurrent reloads run one at a time.
func (p *Providers) Reload(ctx context.Context) error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	all, err := p.store.ListAllProviders(ctx)
	if err != nil {
		return fmt.Errorf("reading OIDC providers: %w", err)
	}
	now := p.now().UTC()
	for _, r := range all {
		if !r.Active() {
			continue
		}
		_, err := p.store.UpdateProvider(ctx, r.Tenant, r.ID, func(u *storage.OIDCProvider, _ []*storage.OIDCProvider) error {
			u.UpdatedAt = now
			return nil
		})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("stamping OIDC provider for reload: %w", err)
		}
	}
	return p.refresh(ctx, true)
}

// forget drops a provider's discovery document and its cached keys.
func (p *Providers) forget(id string) {
	p.refreshMu.Lock()
	d := p.disc[id]
	delete(p.disc, id)
	delete(p.tried, id)
	p.refreshMu.Unlock()
	if d != nil && d.doc != nil {
		p.jwks.drop(d.doc.JWKSURI)
	}
}

func (p *Providers) live(id string) *liveProvider {
	for _, lp := range p.snap.Load().list {
		if lp.rec.ID == id {
			return lp
		}
	}
	return nil
}

// servesJWKS reports whether an active, discovered provider uses uri.
func (p *Providers) servesJWKS(uri string) bool {
	for _, lp := range p.snap.Load().list {
		if lp.doc != nil && lp.doc.JWKSURI == uri {
			return true
		}
	}
	return false
}

func (p *Providers) refreshAfterWrite(ctx context.Context) {
	if err := p.refresh(context.WithoutCancel(ctx), false); err != nil {
		p.log.Error("refreshing the OIDC provider cache after a write", "err", err)
	}
}

// Refresh re-reads providers into the verification snapshot, running
// discovery for providers without an installed document.
func (p *Providers) Refresh(ctx context.Context) error { return p.refresh(ctx, false) }

// Run reconciles with the store until ctx ends.
func (p *Providers) Run(ctx context.Context) {
	reconcileLoop(ctx, p.cfg.ReconcileInterval, p.log, "oidc-providers", p.Refresh)
}

func (p *Providers) refresh(ctx context.Context, rediscover bool) error {
	refetch, gone, err := p.refreshLocked(ctx, rediscover)
	if err != nil {
		return err
	}
	// A provider that left the trusted set (invalidated or deleted, here
	// or on another node) takes its cached keys along; should it be
	// trusted again, only the keys it then publishes verify.
	for _, uri := range gone {
		p.jwks.drop(uri)
		// Another tenant's registration of the same IdP still trusts
		// it: fetch its current keys now rather than on its next token,
		// where the per-URL refetch limit could turn a burst into 401s.
		if p.servesJWKS(uri) {
			if _, err := p.jwks.refetch(ctx, uri); err != nil {
				p.log.Warn("OIDC JWKS refetch for a shared provider failed", "err", err)
			}
		}
	}
	// Key sets of rediscovered providers are fetched outside the lock; a
	// failed fetch keeps the previous keys.
	for _, uri := range refetch {
		if _, err := p.jwks.refetch(ctx, uri); err != nil {
			p.log.Warn("OIDC JWKS refetch failed; keeping the previous keys", "err", err)
		}
	}
	return nil
}

func (p *Providers) refreshLocked(ctx context.Context, rediscover bool) (refetch, gone []string, err error) {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	all, err := p.store.ListAllProviders(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reading OIDC providers: %w", err)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if a.WellKnownURI != b.WellKnownURI {
			return a.WellKnownURI < b.WellKnownURI
		}
		return a.ID < b.ID
	})
	disc := make(map[string]*discovered, len(all))
	s := &providerSnapshot{}
	fp := xxhash.New()
	seen := map[string]bool{}
	for _, r := range all {
		if !r.Active() {
			continue
		}
		issKey := strings.Join(r.Issuers, "\x00")
		d := p.disc[r.ID]
		had := d != nil
		if d != nil && (d.uri != r.WellKnownURI || d.issuers != issKey) {
			d = nil
		}
		changed := had && (d == nil || !d.stamp.Equal(r.UpdatedAt))
		retryDue := d == nil && time.Since(p.tried[r.ID]) >= pendingRetry
		if rediscover || changed || retryDue {
			if nd := p.discover(ctx, r); nd != nil {
				d = nd
				delete(p.tried, r.ID)
				if (rediscover || changed) && !seen[nd.doc.JWKSURI] {
					seen[nd.doc.JWKSURI] = true
					refetch = append(refetch, nd.doc.JWKSURI)
				}
			} else if d == nil {
				p.tried[r.ID] = time.Now()
			} else {
				// Keep the previous document; retry on the next change.
				kept := *d
				kept.stamp = r.UpdatedAt
				d = &kept
			}
		}
		lp := &liveProvider{rec: r}
		if d != nil {
			disc[r.ID] = d
			lp.doc = d.doc
		}
		rc := ""
		if r.RolesClaim != nil {
			rc = "=" + *r.RolesClaim
		}
		fmt.Fprintf(fp, "%s\x00%s\x00%q\x00%q\x00%s\x00%d\x00%v\x00", r.ID, r.Tenant, r.Issuers, r.Audiences, rc, r.UpdatedAt.UnixNano(), lp.doc != nil)
		if lp.doc != nil {
			fmt.Fprintf(fp, "%s\x00%s\x00", lp.doc.Issuer, lp.doc.JWKSURI)
		}
		s.list = append(s.list, lp)
	}
	active := make(map[string]bool, len(all))
	for _, r := range all {
		if r.Active() {
			active[r.ID] = true
		}
	}
	for id, d := range p.disc {
		if !active[id] && d.doc != nil {
			gone = append(gone, d.doc.JWKSURI)
		}
	}
	p.disc = disc
	p.snap.Store(s)
	p.health.succeeded()
	p.changed.observe(fp.Sum64())
	return refetch, gone, nil
}

// pendingRetry spaces discovery attempts of a provider that is down.
const pendingRetry = 30 * time.Second

// discover fetches and pins a provider's discovery document; nil when the
// provider stays pending. Logs carry the provider id and the error class,
// never the URI or upstream text.
func (p *Providers) discover(ctx context.Context, r *storage.OIDCProvider) *discovered {
	doc, err := p.fetch.discover(ctx, r.WellKnownURI)
	if err != nil {
		p.log.Warn("OIDC discovery failed; provider pending", "provider", r.ID, "err", err)
		return nil
	}
	if len(r.Issuers) > 0 && !containsAny([]string{doc.Issuer}, r.Issuers) {
		p.log.Warn("OIDC discovery issuer is not among the registered issuers; provider pending", "provider", r.ID)
		return nil
	}
	if p.cfg.RequireHTTPS && !strings.HasPrefix(doc.JWKSURI, "https://") {
		p.log.Warn("OIDC jwks_uri is not https; provider pending", "provider", r.ID)
		return nil
	}
	return &discovered{uri: r.WellKnownURI, issuers: strings.Join(r.Issuers, "\x00"), doc: doc, stamp: r.UpdatedAt}
}
