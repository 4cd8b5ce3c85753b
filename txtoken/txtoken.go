// Package txtoken mints and verifies transaction routing tokens
// (docs/decisions/0015-transactions.md): a compute member receives one with every
// dispatch made inside a transaction and echoes it on its callbacks to
// join that transaction. A token is
//
//	base64url(JSON {"n":nodeId,"t":txId,"e":unixExpiry}) "." base64url(HMAC-SHA256(secret, JSON))
//
// The HMAC covers the claims' JSON bytes, the form compute members already
// handle.
package txtoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// Verification failures. Verify wraps them; test with errors.Is.
var (
	// ErrMalformed: not two base64url parts, or claims that are not the
	// expected JSON object.
	ErrMalformed = errors.New("txtoken: malformed token")
	// ErrSignature: the signature does not match (another secret, or a
	// tampered payload).
	ErrSignature = errors.New("txtoken: signature mismatch")
	// ErrExpired: the signature holds but the expiry has passed.
	ErrExpired = errors.New("txtoken: token expired")
)

// Claims are what a token carries.
type Claims struct {
	Node string `json:"n"`
	Tx   string `json:"t"`
	// Exp is the expiry in unix seconds; the token is valid strictly
	// before that second.
	Exp int64 `json:"e"`
}

// SecretBytes is the length of a per-process random secret.
const SecretBytes = 32

// b64 is strict so that exactly one encoding of a payload verifies.
var b64 = base64.RawURLEncoding.Strict()

// Signer mints and verifies tokens with one secret. It is safe for
// concurrent use.
type Signer struct {
	key  []byte
	node string
	ttl  time.Duration
	// now is the clock; tests replace it.
	now func() time.Time
	// macs pools keyed HMAC states: hmac.New allocates and hashes the key
	// on every call, a reset one does neither.
	macs *sync.Pool
}

// New returns a signer for node with secret and token lifetime ttl.
func New(secret []byte, node string, ttl time.Duration) *Signer {
	key := append([]byte(nil), secret...)
	return &Signer{key: key, node: node, ttl: ttl, now: time.Now,
		macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

// NewRandom returns a signer with a fresh random secret: single-node mode,
// where only this process ever verifies its tokens.
func NewRandom(node string, ttl time.Duration) (*Signer, error) {
	k := make([]byte, SecretBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("txtoken: drawing a secret: %w", err)
	}
	return New(k, node, ttl), nil
}

// WithClock returns a copy of s reading time from now (tests).
func (s *Signer) WithClock(now func() time.Time) *Signer {
	c := *s
	c.now = now
	return &c
}

// Node is the node id the signer stamps into its tokens.
func (s *Signer) Node() string { return s.node }

// TTL is the lifetime of minted tokens.
func (s *Signer) TTL() time.Duration { return s.ttl }

// Sign mints a token for transaction txID. The expiry is rounded up to
// the next whole second, so a token lives at least the TTL.
func (s *Signer) Sign(txID string) string {
	exp := s.now().Add(s.ttl)
	e := exp.Unix()
	if exp.Nanosecond() > 0 {
		e++
	}
	payload := appendClaims(make([]byte, 0, 96), s.node, txID, e)
	n := b64.EncodedLen(len(payload))
	out := make([]byte, 0, n+1+b64.EncodedLen(sha256.Size))
	out = b64.AppendEncode(out, payload)
	out = append(out, '.')
	var sum [sha256.Size]byte
	out = b64.AppendEncode(out, s.appendMAC(sum[:0], payload))
	return string(out)
}

// appendClaims encodes the claims object by hand: ids are plain ASCII in
// practice, so the fast path copies them, and anything else goes through
// the JSON encoder.
func appendClaims(b []byte, node, tx string, exp int64) []byte {
	b = append(b, `{"n":`...)
	b = appendJSONString(b, node)
	b = append(b, `,"t":`...)
	b = appendJSONString(b, tx)
	b = append(b, `,"e":`...)
	b = strconv.AppendInt(b, exp, 10)
	return append(b, '}')
}

func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (s *Signer) appendMAC(dst, payload []byte) []byte {
	h := s.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(payload)
	dst = h.Sum(dst)
	s.macs.Put(h)
	return dst
}

func (s *Signer) mac(payload []byte) []byte { return s.appendMAC(nil, payload) }

// Parse splits and decodes a token without checking its signature: the
// claims JSON as signed, the signature and the decoded claims. Any
// deviation from the format is ErrMalformed.
func Parse(tok string) (payload, sig []byte, c Claims, err error) {
	p, sg, ok := strings.Cut(tok, ".")
	if !ok || p == "" || sg == "" || strings.IndexByte(sg, '.') >= 0 {
		return nil, nil, c, ErrMalformed
	}
	if payload, err = b64.DecodeString(p); err != nil {
		return nil, nil, c, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	if sig, err = b64.DecodeString(sg); err != nil || len(sig) != sha256.Size {
		return nil, nil, c, fmt.Errorf("%w: signature encoding", ErrMalformed)
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, nil, c, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	if c.Tx == "" || c.Exp <= 0 {
		return nil, nil, c, fmt.Errorf("%w: claims need t and e", ErrMalformed)
	}
	return payload, sig, c, nil
}

// Verify checks tok's signature in constant time, then its expiry, and
// returns its claims.
func (s *Signer) Verify(tok string) (Claims, error) {
	payload, sig, c, err := Parse(tok)
	if err != nil {
		return Claims{}, err
	}
	var sum [sha256.Size]byte
	if !hmac.Equal(sig, s.appendMAC(sum[:0], payload)) {
		return Claims{}, ErrSignature
	}
	if s.now().Unix() >= c.Exp {
		return c, ErrExpired
	}
	return c, nil
}
