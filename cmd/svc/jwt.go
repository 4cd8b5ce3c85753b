package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"svc/authcache"
	"svc/fast"
	"svc/iam"
	"svc/platform/config"
	"svc/storage"
)

// jwtMode is the running jwt-mode machinery: the authenticator, the IAM
// services the HTTP layer serves, and the reconcile loop to stop.
type jwtMode struct {
	auth  *authcache.Authenticator
	deps  *fast.IAMDeps
	keys  *iam.Keys
	cache *authcache.Cache
}

// startJWT builds jwt mode from config: the bootstrap keypair derived from
// SVC_JWT_SIGNING_KEY, the bootstrap client, the issuer and the
// verification chain. ext are the federated verifiers (OIDC providers,
// then trusted keys), consulted after svc's own keys.
func startJWT(ctx context.Context, cfg *config.Config, st storage.IAMStores, ext []authcache.External, log *slog.Logger) (*jwtMode, error) {
	signing, err := iam.ParseSigningKey(cfg.JWTSigningKey)
	if err != nil {
		return nil, fmt.Errorf("SVC_JWT_SIGNING_KEY: %w", err)
	}
	keys, err := iam.NewKeys(st.Keypairs, signing, cfg.JWTBootstrapAudience, cfg.KeypairDefaultValidityDays)
	if err != nil {
		return nil, err
	}
	// Tokens of a former signing key live out their lifetime, no longer.
	keys.PreviousBootstrapGrace = time.Duration(cfg.JWTExpirySeconds) * time.Second
	if err := keys.Bootstrap(ctx); err != nil {
		return nil, err
	}
	clients := iam.NewClients(st.Clients, cfg.M2MAdminRoleEnabled)
	if cfg.BootstrapClientID != "" {
		if iam.ShortOperatorSecret(cfg.BootstrapClientSecret) {
			// Neither the secret nor its length is logged.
			log.Warn("SVC_BOOTSTRAP_CLIENT_SECRET is shorter than 32 characters; it is stored with Argon2id, but use a long random secret",
				"client_id", cfg.BootstrapClientID)
		}
		if err := clients.EnsureBootstrap(ctx, cfg.BootstrapClientID, cfg.BootstrapClientSecret,
			cfg.BootstrapTenantID, cfg.BootstrapUserID, cfg.BootstrapRoles); err != nil {
			return nil, err
		}
		// Argon2id's 19 MiB working memory is garbage now; hand it back to
		// the system instead of keeping it resident for the life of an idle
		// server (start-up RSS 67 → 40 MiB on the memory engine).
		debug.FreeOSMemory()
	}
	cache, err := authcache.New(keys, ext, authcache.Options{Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience,
		ReconcileInterval: cfg.AuthCacheReconcileInterval, Log: log, Revocations: st.Revocations})
	if err != nil {
		return nil, err
	}
	if err := cache.Start(ctx); err != nil {
		cache.Close()
		return nil, err
	}
	return &jwtMode{
		auth:  &authcache.Authenticator{C: cache, Log: log},
		keys:  keys,
		cache: cache,
		deps: &fast.IAMDeps{Clients: clients, Keys: keys, Issuer: iam.NewIssuer(keys, cfg.JWTIssuer, cfg.JWTAudience, cfg.JWTExpirySeconds),
			Subjects: cache, Stale: cache.Stale, Tokens: cache},
	}, nil
}

// Close stops the reconcile loop.
func (m *jwtMode) Close() {
	if m != nil {
		m.cache.Close()
	}
}

// printKeyWarnings is the banner's warning for signing keys in their final
// 30 days (docs/decisions/0006-tokens-keypairs-clients.md, docs/decisions/0028-listeners-and-operations.md).
func (m *jwtMode) printKeyWarnings(w io.Writer, now time.Time) {
	if m == nil {
		return
	}
	for _, line := range m.keys.ExpiryWarning(now) {
		fmt.Fprintln(w, "  WARNING: "+line)
	}
}
