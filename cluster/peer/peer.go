// Package peer is the authenticated internal route between svc nodes
// (docs/decisions/0026-cluster.md, internal route): compute dispatch forwarding and the
// scheduler's fire hand-off travel over it. Only a node holding the shared
// SVC_HMAC_SECRET can make a call another node acts on:
//
//   - the key is HKDF-SHA256 of the secret (no salt, info "svc-dispatch-v1"),
//     used for AES-256-GCM;
//   - a request body is nonce (12 bytes) || ciphertext || tag, sent as
//     Content-Type application/svc-dispatch-v1 with X-Dispatch-Timestamp
//     (unix seconds); the associated data is "METHOD\nPATH\nTIMESTAMP", so a
//     body cannot be replayed on another route or with another timestamp;
//   - a timestamp more than Skew away from the receiver's clock, a nonce seen
//     before (a replay cache of ReplayEntries nonces, each kept 2×Skew), a
//     body over MaxBody, and anything that does not decrypt are refused with
//     403 before any handler runs;
//   - the response is sealed too, bound to the request's nonce, so a caller
//     acts only on an answer from a node holding the secret.
//
// The package has no notion of HTTP servers: the fast package mounts the
// routes a Mux holds and calls Open and SealResponse around them.
package peer

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

const (
	// ContentType marks a sealed body.
	ContentType = "application/svc-dispatch-v1"
	// HeaderTimestamp carries the sender's unix seconds.
	HeaderTimestamp = "X-Dispatch-Timestamp"
	// Skew is the accepted clock difference between sender and receiver.
	Skew = 30 * time.Second
	// MaxBody caps a sealed body.
	MaxBody = 10 << 20
	// ReplayEntries bounds the replay cache.
	ReplayEntries = 100_000
	// NonceSize is AES-GCM's standard nonce length.
	NonceSize = 12

	info = "svc-dispatch-v1"
)

// Errors of Open. Every one of them is answered 403: the caller learns
// nothing about which check failed.
var (
	ErrForbidden = errors.New("peer: call refused")
	// ErrReplayFull: the replay cache is full of live nonces; refusing is
	// the only answer that cannot let a replay through.
	ErrReplayFull = errors.New("peer: replay cache full")
)

// Key seals and opens bodies with the key derived from the cluster secret.
type Key struct {
	aead cipher.AEAD
}

// DecodeSecret decodes SVC_HMAC_SECRET (64 hex characters).
func DecodeSecret(hexSecret string) ([]byte, error) {
	b, err := hex.DecodeString(hexSecret)
	if err != nil || len(b) != 32 {
		return nil, errors.New("peer: SVC_HMAC_SECRET must be 64 hex characters")
	}
	return b, nil
}

// NewKey derives the internal-route key from the raw secret.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) == 0 {
		return nil, errors.New("peer: empty secret")
	}
	k, err := hkdf.Key(sha256.New, secret, nil, info, 32)
	if err != nil {
		return nil, fmt.Errorf("peer: deriving the key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("peer: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("peer: gcm: %w", err)
	}
	return &Key{aead: aead}, nil
}

// ad builds the associated data of a request: METHOD\nPATH\nTIMESTAMP.
func appendAD(b []byte, method, path string, ts int64) []byte {
	b = append(b, method...)
	b = append(b, '\n')
	b = append(b, path...)
	b = append(b, '\n')
	return strconv.AppendInt(b, ts, 10)
}

// appendRespAD is a response's associated data: the request's, marked as a
// response and bound to the request's nonce.
func appendRespAD(b []byte, method, path string, ts int64, reqNonce []byte) []byte {
	b = append(b, "RESPONSE\n"...)
	b = appendAD(b, method, path, ts)
	b = append(b, '\n')
	return append(b, reqNonce...)
}

// Seal encrypts a request body for method and path at ts (unix seconds):
// a fresh random nonce followed by ciphertext and tag.
func (k *Key) Seal(method, path string, ts int64, plain []byte) []byte {
	out := make([]byte, NonceSize, NonceSize+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(err)
	}
	var adb [128]byte
	return k.aead.Seal(out, out[:NonceSize], plain, appendAD(adb[:0], method, path, ts))
}

// SealResponse encrypts a response to the request with nonce reqNonce.
func (k *Key) SealResponse(method, path string, ts int64, reqNonce, plain []byte) []byte {
	out := make([]byte, NonceSize, NonceSize+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		panic(err)
	}
	var adb [160]byte
	return k.aead.Seal(out, out[:NonceSize], plain, appendRespAD(adb[:0], method, path, ts, reqNonce))
}

// OpenResponse decrypts a response to the request sealed with reqNonce.
func (k *Key) OpenResponse(method, path string, ts int64, reqNonce, body []byte) ([]byte, error) {
	if len(body) < NonceSize+k.aead.Overhead() {
		return nil, ErrForbidden
	}
	var adb [160]byte
	plain, err := k.aead.Open(nil, body[:NonceSize], body[NonceSize:], appendRespAD(adb[:0], method, path, ts, reqNonce))
	if err != nil {
		return nil, ErrForbidden
	}
	return plain, nil
}

// open decrypts a request body; no freshness checks.
func (k *Key) open(method, path string, ts int64, body []byte) ([]byte, error) {
	if len(body) < NonceSize+k.aead.Overhead() {
		return nil, ErrForbidden
	}
	var adb [128]byte
	plain, err := k.aead.Open(nil, body[:NonceSize], body[NonceSize:], appendAD(adb[:0], method, path, ts))
	if err != nil {
		return nil, ErrForbidden
	}
	return plain, nil
}

// Guard checks incoming calls: seal, timestamp window, replay. It is safe
// for concurrent use.
type Guard struct {
	key *Key
	now func() time.Time

	mu sync.Mutex
	// seen maps a nonce to the unix-nano time it may be forgotten.
	seen map[[NonceSize]byte]int64
	// fifo is the nonces in acceptance order (so in expiry order): the
	// sweep pops expired ones off the front.
	fifo []seenNonce
	head int
	max  int
}

type seenNonce struct {
	n   [NonceSize]byte
	exp int64
}

// NewGuard returns a guard opening calls sealed with key.
func NewGuard(key *Key) *Guard {
	return &Guard{key: key, now: time.Now, seen: map[[NonceSize]byte]int64{}, max: ReplayEntries}
}

// WithClock returns g reading time from now (tests).
func (g *Guard) WithClock(now func() time.Time) *Guard {
	g.now = now
	return g
}

// Key is the guard's key, for sealing responses.
func (g *Guard) Key() *Key { return g.key }

// Open authenticates a call and returns its plaintext. contentType and
// tsHeader are the request's Content-Type and X-Dispatch-Timestamp. The
// nonce is recorded only once the body has decrypted, so forged calls
// cannot fill the replay cache. Every failure is ErrForbidden or
// ErrReplayFull.
func (g *Guard) Open(method, path string, contentType, tsHeader, body []byte) (plain []byte, ts int64, err error) {
	if string(contentType) != ContentType || len(body) > MaxBody {
		return nil, 0, ErrForbidden
	}
	ts, err = strconv.ParseInt(string(tsHeader), 10, 64)
	if err != nil {
		return nil, 0, ErrForbidden
	}
	now := g.now()
	if d := now.Sub(time.Unix(ts, 0)); d > Skew || d < -Skew {
		return nil, 0, ErrForbidden
	}
	plain, err = g.key.open(method, path, ts, body)
	if err != nil {
		return nil, 0, err
	}
	var n [NonceSize]byte
	copy(n[:], body[:NonceSize])
	if err := g.remember(n, now); err != nil {
		return nil, 0, err
	}
	return plain, ts, nil
}

// remember records nonce n, refusing one already seen.
func (g *Guard) remember(n [NonceSize]byte, now time.Time) error {
	t := now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.head < len(g.fifo) && g.fifo[g.head].exp <= t {
		e := g.fifo[g.head]
		if g.seen[e.n] == e.exp {
			delete(g.seen, e.n)
		}
		g.head++
	}
	if g.head > 0 && g.head >= len(g.fifo)/2 {
		// Compact so the slice does not grow without bound.
		g.fifo = append(g.fifo[:0], g.fifo[g.head:]...)
		g.head = 0
	}
	if exp, ok := g.seen[n]; ok && exp > t {
		return ErrForbidden
	}
	if len(g.seen) >= g.max {
		return ErrReplayFull
	}
	exp := t + int64(2*Skew)
	g.seen[n] = exp
	g.fifo = append(g.fifo, seenNonce{n: n, exp: exp})
	return nil
}

// Nonce returns the request nonce of a sealed body (for SealResponse).
func Nonce(body []byte) []byte {
	if len(body) < NonceSize {
		return nil
	}
	return body[:NonceSize]
}
