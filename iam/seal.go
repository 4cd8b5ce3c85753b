package iam

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
)

// sealer encrypts the private halves of runtime keypairs before they reach
// storage. The key is derived from the configured signing key, so a
// database dump alone does not yield signing keys, and changing the signing
// key retires every stored runtime key (they no longer open).
type sealer struct{ aead cipher.AEAD }

const sealLabel = "svc keypair seal v1"

func newSealer(signingKey *rsa.PrivateKey) (*sealer, error) {
	der, err := x509.MarshalPKCS8PrivateKey(signingKey)
	if err != nil {
		return nil, fmt.Errorf("encoding the signing key: %w", err)
	}
	key, err := hkdf.Key(sha256.New, der, nil, sealLabel, 32)
	if err != nil {
		return nil, fmt.Errorf("deriving the seal key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal cipher: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal binds the ciphertext to kid (as associated data) so a sealed key
// cannot be moved under another record's id.
func (s *sealer) seal(kid string, key *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the private key: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(der)+s.aead.Overhead())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, der, []byte(kid)), nil
}

var errSealedKey = errors.New("sealed private key does not open with this signing key")

func (s *sealer) open(kid string, sealed []byte) (*rsa.PrivateKey, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errSealedKey
	}
	der, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(kid))
	if err != nil {
		return nil, errSealedKey
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parsing an unsealed private key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("unsealed private key is not RSA")
	}
	rk.Precompute()
	return rk, nil
}
