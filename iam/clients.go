package iam

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"svc/platform/apierr"
	"svc/storage"
)

// ErrInvalidClient is every client-authentication failure at the token
// endpoint; callers never learn which part was wrong.
var ErrInvalidClient = errors.New("iam: invalid client")

// Clients manages machine clients of each tenant.
type Clients struct {
	store            storage.M2MClients
	adminRoleEnabled bool
	now              func() time.Time
	// password hashes operator-chosen secrets; verified keeps the token
	// rate for them (secret_cache.go).
	password PasswordParams
	verified *verifiedSecrets
}

// NewClients builds the machine-client service. adminRoleEnabled is
// SVC_IAM_M2M_ADMIN_ROLE_ENABLED.
func NewClients(store storage.M2MClients, adminRoleEnabled bool) *Clients {
	return &Clients{store: store, adminRoleEnabled: adminRoleEnabled, now: time.Now,
		password: DefaultPasswordParams, verified: newVerifiedSecrets(maxVerifiedSecrets)}
}

// MinOperatorSecretLen is the length below which start-up warns about the
// bootstrap secret: 32 characters of a random alphabet are ~160 bits or
// more, beyond an offline dictionary even of a leaked backup.
const MinOperatorSecretLen = 32

// ShortOperatorSecret reports whether a configured secret is shorter than
// MinOperatorSecretLen characters.
func ShortOperatorSecret(secret string) bool {
	return utf8.RuneCountInString(secret) < MinOperatorSecretLen
}

// ClientCredentials is the create/rotate result (RFC 7591 shape); Secret is
// shown this once and never again.
type ClientCredentials struct {
	ClientID string
	Secret   string
	IssuedAt time.Time
	Roles    []string
}

func clientNotFound() *apierr.Error {
	return notFound(apierr.M2MClientNotFound, "M2M client not found")
}

// ValidClientID reports whether id has the shape of a client id in a path.
func ValidClientID(id string) bool {
	if len(id) == 0 || len(id) > 100 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func checkClientID(id string) error {
	if !ValidClientID(id) {
		return badParam("clientId", "invalid clientId")
	}
	return nil
}

// Create makes a client in tenant with ROLE_M2M, plus ROLE_ADMIN when
// withAdmin is asked and the deployment allows it.
func (c *Clients) Create(ctx context.Context, tenant string, withAdmin bool) (*ClientCredentials, error) {
	if withAdmin && !c.adminRoleEnabled {
		return nil, apierr.New(apierr.FeatureDisabled, "M2M admin-role grants are disabled")
	}
	roles := []string{RoleM2M}
	if withAdmin {
		roles = append(roles, RoleAdmin)
	}
	now := c.now().UTC()
	secret := newClientSecret()
	for attempt := 0; ; attempt++ {
		id := newClientID()
		err := c.store.CreateClient(ctx, &storage.M2MClient{ClientID: id, Tenant: tenant, UserID: id, Roles: roles,
			SecretHash: HashSecret(secret), CreatedAt: now, UpdatedAt: now})
		if err == nil {
			return &ClientCredentials{ClientID: id, Secret: secret, IssuedAt: now, Roles: roles}, nil
		}
		if !errors.Is(err, storage.ErrExists) || attempt == 1 {
			return nil, fmt.Errorf("iam: creating a client: %w", err)
		}
	}
}

// List returns tenant's clients, oldest first.
func (c *Clients) List(ctx context.Context, tenant string) ([]*storage.M2MClient, error) {
	l, err := c.store.ListClients(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("iam: listing clients: %w", err)
	}
	return l, nil
}

// RotateSecret gives id a new secret; the old one stops working at once.
// Another tenant's client reads as not found.
func (c *Clients) RotateSecret(ctx context.Context, tenant, id string) (*ClientCredentials, error) {
	if err := checkClientID(id); err != nil {
		return nil, err
	}
	secret := newClientSecret()
	rec, err := c.store.SetClientSecret(ctx, tenant, id, HashSecret(secret), c.now().UTC())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, clientNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("iam: rotating a client secret: %w", err)
	}
	return &ClientCredentials{ClientID: rec.ClientID, Secret: secret, IssuedAt: rec.CreatedAt, Roles: rec.Roles}, nil
}

// Delete removes id from tenant.
func (c *Clients) Delete(ctx context.Context, tenant, id string) error {
	if err := checkClientID(id); err != nil {
		return err
	}
	err := c.store.DeleteClient(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return clientNotFound()
	}
	if err != nil {
		return fmt.Errorf("iam: deleting a client: %w", err)
	}
	return nil
}

// Authenticate checks a client's secret in constant time. An unknown id
// is compared against a dummy hash so it costs what a wrong secret costs.
// Storage failures are returned as such (500), not as invalid_client.
func (c *Clients) Authenticate(ctx context.Context, id, secret string) (*storage.M2MClient, error) {
	rec, err := c.store.LookupClient(ctx, id)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("iam: looking up a client: %w", err)
	}
	hash := dummySecretHash
	if rec != nil {
		hash = rec.SecretHash
	}
	ok, err := c.secretMatches(ctx, id, hash, secret)
	if err != nil {
		return nil, err
	}
	if rec == nil || !ok {
		return nil, ErrInvalidClient
	}
	return rec, nil
}

// secretMatches checks secret against a stored form of either kind. An
// Argon2id form is looked up in the verified-secret cache first; only a
// miss pays the slow hash, and only a match is remembered.
func (c *Clients) secretMatches(ctx context.Context, id string, stored []byte, secret string) (bool, error) {
	if !isArgon2id(stored) {
		return sha256Matches(stored, secret), nil
	}
	k := c.verified.mac(id, stored, secret)
	if c.verified.has(k) {
		return true, nil
	}
	ok, err := argon2Matches(ctx, stored, secret)
	if ok {
		c.verified.add(k)
	}
	return ok, err
}

// EnsureBootstrap writes the configured bootstrap client over whatever is
// stored under its id: configuration is the source of truth for it. Its
// secret is a person's choice, so it is stored with Argon2id; a stored
// Argon2id form that already matches is kept (no new salt on every start),
// and a legacy SHA-256 form is replaced.
func (c *Clients) EnsureBootstrap(ctx context.Context, id, secret, tenant, userID string, roles []string) error {
	now := c.now().UTC()
	created := now
	var stored []byte
	if old, err := c.store.LookupClient(ctx, id); err == nil {
		created = old.CreatedAt
		if ok, err := c.secretMatches(ctx, id, old.SecretHash, secret); err != nil {
			return fmt.Errorf("iam: checking the stored bootstrap secret: %w", err)
		} else if ok && isArgon2id(old.SecretHash) {
			stored = old.SecretHash
		}
	}
	if stored == nil {
		stored = hashOperatorSecret(secret, c.password)
		// The secret matches the form just made from it: remember it as
		// verified, so the first token request does not pay a second
		// Argon2id (and its 19 MiB) for what start-up already knows.
		c.verified.add(c.verified.mac(id, stored, secret))
	}
	err := c.store.UpsertClient(ctx, &storage.M2MClient{ClientID: id, Tenant: tenant, UserID: userID,
		Roles: append([]string{}, roles...), SecretHash: stored, CreatedAt: created, UpdatedAt: now})
	if err != nil {
		return fmt.Errorf("iam: storing the bootstrap client: %w", err)
	}
	return nil
}
