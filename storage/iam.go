package storage

import (
	"context"
	"errors"
	"time"
)

// IAM sentinel errors, beside the general ones in storage.go.
var (
	// ErrOwnedByOtherTenant: a trusted-key id is globally unique and another
	// tenant already holds it.
	ErrOwnedByOtherTenant = errors.New("storage: owned by another tenant")
	// ErrCapReached: the tenant already holds as many usable trusted keys as
	// the cap allows.
	ErrCapReached = errors.New("storage: per-tenant cap reached")
)

// IAMStores are the persistence the jwt mode needs. Every node of a cluster
// reads the same records, so a client, key or provider created on one node
// authenticates on all of them.
type IAMStores struct {
	Clients     M2MClients
	Keypairs    Keypairs
	TrustedKeys TrustedKeys
	Providers   OIDCProviders
	Revocations RevokedTokens
}

// M2MClient is a machine client. The secret is kept only as its SHA-256: it
// is 256 random bits, so a fast hash resists guessing as well as a slow KDF.
type M2MClient struct {
	ClientID   string
	Tenant     string
	UserID     string
	Roles      []string
	SecretHash []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// M2MClients stores machine clients. Client ids are unique across tenants
// because the token endpoint receives only the id.
type M2MClients interface {
	// LookupClient finds a client by id in any tenant. Only client
	// authentication at the token endpoint may use it; every
	// administrative read goes through the tenant-scoped methods.
	LookupClient(ctx context.Context, clientID string) (*M2MClient, error)
	ListClients(ctx context.Context, tenant string) ([]*M2MClient, error)
	// CreateClient fails with ErrExists when the id is taken in any tenant.
	CreateClient(ctx context.Context, c *M2MClient) error
	// UpsertClient writes c whatever exists under its id; the bootstrap
	// client is configuration and overrides the stored record at startup.
	UpsertClient(ctx context.Context, c *M2MClient) error
	// SetClientSecret replaces the secret hash and advances UpdatedAt to at.
	// Another tenant's client reads as ErrNotFound.
	SetClientSecret(ctx context.Context, tenant, clientID string, hash []byte, at time.Time) (*M2MClient, error)
	DeleteClient(ctx context.Context, tenant, clientID string) error
}

// Keypair is a signing keypair. Keypairs are global: they sign every
// tenant's tokens.
type Keypair struct {
	KID        string
	Audience   string // client or human
	Algorithm  string // RS256
	PublicSPKI []byte // PKIX DER of the public key
	// PrivateSealed is the PKCS#8 private key sealed with a key derived from
	// the configured signing key; nil for the bootstrap keypair, whose
	// private half is the configured key itself.
	PrivateSealed []byte
	Active        bool
	ValidFrom     time.Time
	ValidTo       time.Time
	Bootstrap     bool
	// Retired marks a deleted bootstrap keypair. The record stays so a
	// restart does not re-create a key an administrator removed.
	Retired   bool
	CreatedAt time.Time
}

// Keypairs stores signing keypairs.
type Keypairs interface {
	GetKeypair(ctx context.Context, kid string) (*Keypair, error)
	ListKeypairs(ctx context.Context) ([]*Keypair, error)
	// CreateKeypair stores k, or fails with ErrExists. When retireUntil is
	// non-nil, every other active keypair of k.Audience turns inactive with
	// ValidTo = min(ValidTo, *retireUntil) in the same atomic step, so
	// concurrent rotations never leave two active keys behind.
	CreateKeypair(ctx context.Context, k *Keypair, retireUntil *time.Time) (err error)
	// UpdateKeypair applies fn to the stored record atomically; an error
	// from fn aborts the write and is returned as is.
	UpdateKeypair(ctx context.Context, kid string, fn func(*Keypair) error) (*Keypair, error)
	DeleteKeypair(ctx context.Context, kid string) error
}

// TrustedKey is an external RSA public key a tenant registered.
type TrustedKey struct {
	KID    string // globally unique
	Tenant string
	// JWK is the public JWK as registered; private members never get here.
	JWK      []byte
	Audience string
	// Issuers is nil when the registration did not carry the field.
	Issuers   []string
	Active    bool
	ValidFrom time.Time
	ValidTo   time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Usable reports whether k counts against its tenant's cap at now.
func (k *TrustedKey) Usable(now time.Time) bool { return k.Active && now.Before(k.ValidTo) }

// TrustedKeyPut are the rules PutTrustedKey applies atomically with the
// write.
type TrustedKeyPut struct {
	// Cap is the most usable keys a tenant may hold; 0 is unbounded. The key
	// being written does not count against it (an upsert takes no slot).
	Cap int
	Now time.Time
	// RetireOthersUntil, when non-nil, turns the tenant's other active keys
	// of the same audience inactive with ValidTo = min(ValidTo, value),
	// after the new key is written.
	RetireOthersUntil *time.Time
}

// TrustedKeys stores trusted keys, isolated per tenant: another tenant's
// key reads as ErrNotFound everywhere except PutTrustedKey, which must
// report the clash (ErrOwnedByOtherTenant) because ids are global.
type TrustedKeys interface {
	GetTrustedKey(ctx context.Context, tenant, kid string) (*TrustedKey, error)
	ListTrustedKeys(ctx context.Context, tenant string) ([]*TrustedKey, error)
	// ListAllTrustedKeys feeds the verification cache.
	ListAllTrustedKeys(ctx context.Context) ([]*TrustedKey, error)
	// PutTrustedKey inserts or replaces k in k.Tenant (ErrCapReached,
	// ErrOwnedByOtherTenant).
	PutTrustedKey(ctx context.Context, k *TrustedKey, opt TrustedKeyPut) error
	// UpdateTrustedKey applies fn atomically; fn also sees the tenant's
	// other keys so cap rules can be decided inside the same step.
	UpdateTrustedKey(ctx context.Context, tenant, kid string, fn func(k *TrustedKey, others []*TrustedKey) error) (*TrustedKey, error)
	DeleteTrustedKey(ctx context.Context, tenant, kid string) error
}

// OIDCProvider is a tenant's registration of an external OpenID Connect
// issuer.
type OIDCProvider struct {
	ID           string
	Tenant       string
	WellKnownURI string
	Issuers      []string
	Audiences    []string
	// RolesClaim nil means the configured default.
	RolesClaim    *string
	InvalidatedAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Active reports whether the provider's tokens are trusted.
func (p *OIDCProvider) Active() bool { return p.InvalidatedAt == nil }

// OIDCProviders stores provider registrations per tenant.
type OIDCProviders interface {
	GetProvider(ctx context.Context, tenant, id string) (*OIDCProvider, error)
	ListProviders(ctx context.Context, tenant string) ([]*OIDCProvider, error)
	// ListAllProviders feeds the verification cache.
	ListAllProviders(ctx context.Context) ([]*OIDCProvider, error)
	// CreateProvider stores p, or fails with ErrExists when p.Tenant already
	// registered the URI. check runs in the same atomic step over the other
	// tenants' registrations of that URI, so sharing rules cannot race.
	CreateProvider(ctx context.Context, p *OIDCProvider, check func(sameURI []*OIDCProvider) error) error
	// UpdateProvider applies fn atomically; sameURI are the other tenants'
	// registrations of the provider's URI.
	UpdateProvider(ctx context.Context, tenant, id string, fn func(p *OIDCProvider, sameURI []*OIDCProvider) error) (*OIDCProvider, error)
	DeleteProvider(ctx context.Context, tenant, id string) error
}
