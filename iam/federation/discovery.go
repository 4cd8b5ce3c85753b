package federation

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	json "github.com/goccy/go-json"

	"svc/platform/netguard"
)

// DiscoveryDoc is the part of an OpenID Provider Configuration svc uses.
type DiscoveryDoc struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// ParseDiscovery decodes a discovery document; issuer and jwks_uri are
// required, unknown members ignored.
func ParseDiscovery(b []byte) (*DiscoveryDoc, error) {
	var d DiscoveryDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, errors.New("discovery document is not a JSON object")
	}
	if d.Issuer == "" || d.JWKSURI == "" {
		return nil, errors.New("discovery document lacks issuer or jwks_uri")
	}
	return &d, nil
}

// ParseJWKS decodes a JWK Set into RS256-capable keys by kid. Entries that
// are not RSA, have no kid, declare another alg or use, or fall outside the
// modulus bounds are skipped: one odd key must not hide the others.
func ParseJWKS(b []byte) (map[string]*rsa.PublicKey, error) {
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Alg string `json:"alg"`
			Use string `json:"use"`
			N   string `json:"n"`
			E   string `json:"e"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, errors.New("JWKS is not a JSON object with keys")
	}
	out := make(map[string]*rsa.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		if k.Kty != "RSA" || k.Kid == "" || (k.Alg != "" && k.Alg != "RS256") || (k.Use != "" && k.Use != "sig") {
			continue
		}
		pub, err := rsaFromNE(k.N, k.E)
		if err != nil {
			continue
		}
		out[k.Kid] = pub
	}
	return out, nil
}

// fetcher makes the guarded outbound calls. Its errors name a class and a
// status, never upstream text or addresses, so nothing the remote side
// controls reaches logs or clients.
type fetcher struct {
	client       *http.Client
	requireHTTPS bool
}

var errFetch = errors.New("federation: fetch failed")

func (f *fetcher) get(ctx context.Context, rawURL string, okType func(string) bool) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: unusable URL", errFetch)
	}
	if f.requireHTTPS && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: https required", errFetch)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: building request", errFetch)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		// Only the class is kept: the transport text may quote addresses.
		for _, class := range []error{netguard.ErrBlocked, netguard.ErrConnectTimeout, netguard.ErrPoolTimeout, netguard.ErrReadTimeout} {
			if errors.Is(err, class) {
				return nil, fmt.Errorf("%w: %w", errFetch, class)
			}
		}
		return nil, fmt.Errorf("%w: transport error", errFetch)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Redirects land here too: they are never followed.
		return nil, fmt.Errorf("%w: status %d", errFetch, resp.StatusCode)
	}
	if okType != nil && !okType(resp.Header.Get("Content-Type")) {
		return nil, fmt.Errorf("%w: unexpected content type", errFetch)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading body", errFetch)
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("%w: body over %d bytes", errFetch, maxBody)
	}
	return b, nil
}

func jsonType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "application/jwk-set+json")
}

func (f *fetcher) discover(ctx context.Context, uri string) (*DiscoveryDoc, error) {
	b, err := f.get(ctx, uri, nil)
	if err != nil {
		return nil, err
	}
	d, err := ParseDiscovery(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFetch, err)
	}
	return d, nil
}

func (f *fetcher) jwks(ctx context.Context, uri string) (map[string]*rsa.PublicKey, error) {
	b, err := f.get(ctx, uri, jsonType)
	if err != nil {
		return nil, err
	}
	keys, err := ParseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFetch, err)
	}
	return keys, nil
}
