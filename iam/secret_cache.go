package iam

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"
)

// verifiedSecrets remembers secrets that passed an Argon2id verification,
// so the slow hash is paid once per secret and process, not per token
// request. An entry is a keyed hash (HMAC-SHA256 under a random key made
// at start and never stored) of the client id, the stored form and the
// secret: a memory dump gives neither the secrets nor a way to test
// guesses offline without the key, and a changed stored form (a rotated
// bootstrap secret) misses by construction. The map lookup compares MACs,
// whose bytes an attacker cannot steer, so its timing reveals nothing.
type verifiedSecrets struct {
	mu      sync.Mutex
	macs    sync.Pool // hash.Hash under key
	entries map[[sha256.Size]byte]struct{}
	max     int
}

// maxVerifiedSecrets bounds the cache; only clients with operator-chosen
// secrets (the bootstrap client) use it, so a handful is the working set.
const maxVerifiedSecrets = 1024

func newVerifiedSecrets(max int) *verifiedSecrets {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("iam: no randomness for the secret cache key: " + err.Error())
	}
	v := &verifiedSecrets{entries: map[[sha256.Size]byte]struct{}{}, max: max}
	v.macs.New = func() any { return hmac.New(sha256.New, key) }
	return v
}

// mac is the entry of (id, stored, secret); lengths are framed so no two
// triples share an encoding.
func (v *verifiedSecrets) mac(id string, stored []byte, secret string) [sha256.Size]byte {
	h := v.macs.Get().(hash.Hash)
	h.Reset()
	var n [8]byte
	for _, part := range [][]byte{[]byte(id), stored, []byte(secret)} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	v.macs.Put(h)
	return out
}

func (v *verifiedSecrets) has(k [sha256.Size]byte) bool {
	v.mu.Lock()
	_, ok := v.entries[k]
	v.mu.Unlock()
	return ok
}

func (v *verifiedSecrets) add(k [sha256.Size]byte) {
	v.mu.Lock()
	if len(v.entries) >= v.max {
		for old := range v.entries { // map order is random: evict any one
			delete(v.entries, old)
			break
		}
	}
	v.entries[k] = struct{}{}
	v.mu.Unlock()
}
