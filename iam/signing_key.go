package iam

import (
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// ParseSigningKey reads SVC_JWT_SIGNING_KEY: a PEM RSA private key, or the
// base64 of one (so it fits in a single-line variable), PKCS#8 or PKCS#1.
// Errors never quote the value.
func ParseSigningKey(raw string) (*rsa.PrivateKey, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("signing key is empty")
	}
	data := []byte(raw)
	if !strings.HasPrefix(raw, "-----BEGIN") {
		dec, err := decodeBase64Loose(raw)
		if err != nil {
			return nil, errors.New("signing key is neither PEM nor base64")
		}
		data = dec
	}
	der := data
	if block, _ := pem.Decode(data); block != nil {
		if strings.Contains(block.Type, "ENCRYPTED") {
			return nil, errors.New("signing key is an encrypted PEM; supply it unencrypted")
		}
		der = block.Bytes
	} else if strings.HasPrefix(strings.TrimSpace(string(data)), "-----BEGIN") {
		return nil, errors.New("signing key PEM does not parse")
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("signing key is a %T; only RSA keys sign RS256", k)
		}
		return checkRSAKey(rk)
	}
	if rk, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return checkRSAKey(rk)
	}
	return nil, errors.New("signing key is not a PKCS#8 or PKCS#1 RSA private key")
}

func checkRSAKey(k *rsa.PrivateKey) (*rsa.PrivateKey, error) {
	if k.N.BitLen() < 2048 {
		return nil, fmt.Errorf("signing key has %d bits; RS256 needs at least 2048", k.N.BitLen())
	}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("signing key is not a valid RSA key: %w", err)
	}
	k.Precompute()
	return k, nil
}

// decodeBase64Loose accepts standard or URL-safe base64, padded or not,
// with line breaks, as people paste keys in all of these forms.
func decodeBase64Loose(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// KeyID derives a keypair id from its public key: the hex of the first 16
// bytes of SHA-256 over the SPKI DER. Every node, and every test harness
// holding the PEM, computes the same id for the bootstrap key.
func KeyID(pub *rsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encoding the public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:16]), nil
}
