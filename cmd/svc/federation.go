package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"svc/authcache"
	"svc/iam/federation"
	"svc/platform/config"
	"svc/platform/netguard"
)

// federationServices are the trusted-key and OIDC-provider services of jwt
// mode. In mock mode both stay nil and their operations answer 501 (trusted
// keys: 404 FEATURE_DISABLED while registration is off).
type federationServices struct {
	Trusted   *federation.TrustedKeys
	Providers *federation.Providers
	loops     sync.WaitGroup
}

func fedMillis(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// trustedConfig maps the SVC_IAM_TRUSTED_KEY_* settings onto the
// trusted-key service.
func trustedConfig(cfg *config.Config, log *slog.Logger) federation.TrustedConfig {
	return federation.TrustedConfig{
		Enabled:           cfg.TrustedKeyRegistrationEnabled,
		MaxJWKProps:       cfg.TrustedKeyMaxJWKProperties,
		MaxPerTenant:      cfg.TrustedKeyMaxPerTenant,
		DefaultValidity:   time.Duration(cfg.TrustedKeyMaxValidityDays) * 24 * time.Hour,
		Issuer:            cfg.JWTIssuer,
		Audience:          cfg.JWTAudience,
		ReconcileInterval: cfg.AuthCacheReconcileInterval,
		Log:               log,
	}
}

// providersConfig maps the SVC_OIDC_* settings onto the providers'
// service and its guarded HTTP client.
func providersConfig(cfg *config.Config, log *slog.Logger) federation.ProvidersConfig {
	return federation.ProvidersConfig{
		RolesClaim:   cfg.OIDCRolesClaim,
		RequireHTTPS: cfg.OIDCRequireHTTPS,
		Net: netguard.Options{
			AllowPrivate:   cfg.OIDCAllowPrivateNetworks,
			ConnectTimeout: fedMillis(cfg.OIDCConnectTimeoutMS),
			PoolTimeout:    fedMillis(cfg.OIDCConnectionRequestTimeout),
			ReadTimeout:    fedMillis(cfg.OIDCSocketTimeoutMS),
		},
		ReconcileInterval: cfg.AuthCacheReconcileInterval,
		Log:               log,
	}
}

func newFederation(cfg *config.Config, st *stores, log *slog.Logger) (*federationServices, error) {
	if cfg.IAMMode != "jwt" {
		return &federationServices{}, nil
	}
	tk := federation.NewTrustedKeys(trustedConfig(cfg, log), st.IAM.TrustedKeys)
	prov, err := federation.NewProviders(providersConfig(cfg, log), st.IAM.Providers)
	if err != nil {
		return nil, err
	}
	// Warm both caches before serving; a provider that is down stays
	// pending and the reconcile loop retries it.
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
	defer cancel()
	if err := tk.Refresh(ctx); err != nil {
		prov.Close()
		return nil, fmt.Errorf("loading trusted keys: %w", err)
	}
	if err := prov.Refresh(ctx); err != nil {
		prov.Close()
		return nil, fmt.Errorf("loading OIDC providers: %w", err)
	}
	return &federationServices{Trusted: tk, Providers: prov}, nil
}

// externals are the federated links of the verification chain, in chain
// order: OIDC providers, then trusted keys (nil in mock mode).
func (f *federationServices) externals() []authcache.External {
	if f.Providers == nil {
		return nil
	}
	return []authcache.External{f.Providers.Verifier(), f.Trusted.Verifier()}
}

// onChange registers fn (the verified-token cache's purge) to run when a
// trusted key or provider changes, so revocations take effect at once.
func (f *federationServices) onChange(fn func()) {
	if f.Trusted != nil {
		f.Trusted.OnChange(fn)
	}
	if f.Providers != nil {
		f.Providers.OnChange(fn)
	}
}

// run keeps both caches reconciled until ctx ends; close waits for the
// loops, so ctx must be cancelled before close is called.
func (f *federationServices) run(ctx context.Context) {
	for _, loop := range []func(context.Context){f.trustedRun(), f.providersRun()} {
		if loop == nil {
			continue
		}
		f.loops.Add(1)
		go func() {
			defer f.loops.Done()
			loop(ctx)
		}()
	}
}

func (f *federationServices) trustedRun() func(context.Context) {
	if f.Trusted == nil {
		return nil
	}
	return f.Trusted.Run
}

func (f *federationServices) providersRun() func(context.Context) {
	if f.Providers == nil {
		return nil
	}
	return f.Providers.Run
}

func (f *federationServices) close() {
	f.loops.Wait()
	if f.Providers != nil {
		f.Providers.Close()
	}
}
