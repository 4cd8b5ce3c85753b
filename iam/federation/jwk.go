package federation

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// RSA modulus bounds: below 2048 bits is breakable, above 4096 bits turns
// every verification into a CPU sink.
const (
	minModulusBits = 2048
	maxModulusBits = 4096
)

// privateMembers are JWK members that only a private key carries; a
// registration containing any of them leaked a secret and is refused.
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// ParseTrustedJWK validates a trusted-key registration's JWK: an RSA public
// key for RS256 with at most maxProps members, kid (if present) equal to
// keyID, a modulus of 2048–4096 bits and an odd exponent. Errors are
// *apierr.Error (BAD_REQUEST, UNSUPPORTED_KEY_TYPE).
func ParseTrustedJWK(raw []byte, maxProps int, keyID string) (*rsa.PublicKey, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, badRequest("jwk must be a JSON object")
	}
	if maxProps > 0 && len(m) > maxProps {
		return nil, badRequest(fmt.Sprintf("jwk has too many properties (%d > %d)", len(m), maxProps))
	}
	for _, p := range privateMembers {
		if _, ok := m[p]; ok {
			return nil, badRequest("jwk contains private key material (" + p + "); register the public key only")
		}
	}
	kty, ok := jwkString(m, "kty")
	if !ok || kty == "" {
		return nil, badRequest("jwk.kty is required and must be a string")
	}
	if kty != "RSA" {
		return nil, apierr.New(apierr.UnsupportedKeyType, "only RSA keys are supported", apierr.P("kty", kty))
	}
	if _, present := m["kid"]; present {
		kid, ok := jwkString(m, "kid")
		if !ok || kid != keyID {
			return nil, badRequest("jwk.kid must equal keyId")
		}
	}
	if _, present := m["alg"]; present {
		if alg, ok := jwkString(m, "alg"); !ok || alg != "RS256" {
			return nil, apierr.New(apierr.UnsupportedAlgorithm, "only RS256 is supported")
		}
	}
	if _, present := m["use"]; present {
		if use, ok := jwkString(m, "use"); !ok || use != "sig" {
			return nil, badRequest("jwk.use must be sig")
		}
	}
	n, _ := jwkString(m, "n")
	e, _ := jwkString(m, "e")
	return rsaFromNE(n, e)
}

func jwkString(m map[string]json.RawMessage, k string) (string, bool) {
	raw, ok := m[k]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// rsaFromNE builds a public key from base64url n and e (trailing '='
// tolerated) within the modulus bounds.
func rsaFromNE(n, e string) (*rsa.PublicKey, error) {
	if n == "" || e == "" {
		return nil, badRequest("jwk.n and jwk.e are required")
	}
	if len(n) > (maxModulusBits/8)*4/3+4 {
		return nil, badRequest(fmt.Sprintf("jwk modulus exceeds %d bits", maxModulusBits))
	}
	nb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(n, "="))
	if err != nil {
		return nil, badRequest("jwk.n is not base64url")
	}
	eb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(e, "="))
	if err != nil {
		return nil, badRequest("jwk.e is not base64url")
	}
	mod := new(big.Int).SetBytes(nb)
	if bits := mod.BitLen(); bits > maxModulusBits {
		return nil, badRequest(fmt.Sprintf("jwk modulus exceeds %d bits", maxModulusBits))
	} else if bits < minModulusBits {
		return nil, badRequest(fmt.Sprintf("jwk modulus is %d bits; at least %d are required", bits, minModulusBits))
	}
	if len(eb) == 0 || len(eb) > 4 {
		return nil, badRequest("jwk.e out of range")
	}
	exp := 0
	for _, b := range eb {
		exp = exp<<8 | int(b)
	}
	if exp < 3 || exp%2 == 0 || exp > 1<<31-1 {
		return nil, badRequest("jwk.e must be an odd integer of at least 3")
	}
	return &rsa.PublicKey{N: mod, E: exp}, nil
}
