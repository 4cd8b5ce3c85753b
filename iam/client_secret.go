package iam

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
)

// Client ids are 80 random bits in upper-case base32hex (16 characters of
// 0-9A-V), the shape clients already handle (docs/decisions/0006-tokens-keypairs-clients.md); they identify, they do not
// authenticate.
var clientIDEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

func newClientID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return clientIDEncoding.EncodeToString(b[:])[:16]
}

// newClientSecret returns 256 random bits as 64 lower-case hex characters:
// hex survives the form-URL-decoding of HTTP Basic credentials unchanged.
func newClientSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Stored forms of a client secret (storage.M2MClient.SecretHash), told
// apart by their prefix:
//
//   - 32 bytes, no prefix: SHA-256 of a secret svc generated. 256 random
//     bits cannot be guessed offline, so a fast hash is right (docs/decisions/0006-tokens-keypairs-clients.md).
//     Every record written before operator secrets were hashed slowly has
//     this form and keeps working.
//   - "$argon2id$v=19$m=…,t=…,p=…$salt$hash" (argon2id.go): a secret a
//     person chose (the bootstrap client's), which a leaked backup must not
//     give away to a dictionary attack.

// HashSecret is the stored form of a secret svc generated.
func HashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// dummySecretHash is compared against when the client id is unknown, so an
// unknown id costs the same as a wrong generated secret.
var dummySecretHash = HashSecret("svc-unknown-client")

// sha256Matches compares in constant time; both sides are fixed-length
// digests, so not even the length leaks.
func sha256Matches(storedHash []byte, secret string) bool {
	got := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(storedHash, got[:]) == 1
}
