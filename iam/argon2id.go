package iam

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id (RFC 9106) is the slow hash of operator-chosen secrets: it is
// memory-hard, so a leaked backup costs an attacker memory per guess as
// well as time, which GPUs and ASICs do not cheapen the way they cheapen
// bcrypt's fixed 4 KiB; and unlike bcrypt it does not cut secrets at 72
// bytes. The module already depends on golang.org/x.

// PasswordParams are Argon2id's cost parameters. The stored form carries
// them, so changing them affects only secrets hashed afterwards.
type PasswordParams struct {
	Time      uint32 // passes over memory
	MemoryKiB uint32
	Threads   uint8
}

// DefaultPasswordParams are OWASP's Argon2id minimum (19 MiB, 2 passes,
// 1 lane): tens of milliseconds on a server core; the verified-secret cache
// keeps that cost off every request but the first.
var DefaultPasswordParams = PasswordParams{Time: 2, MemoryKiB: 19 * 1024, Threads: 1}

const (
	argon2idPrefix = "$argon2id$"
	argon2SaltLen  = 16
	argon2KeyLen   = 32
	// Bounds a stored record must keep, so a crafted row cannot make one
	// verification take gigabytes or minutes.
	maxArgon2MemoryKiB = 1 << 20 // 1 GiB
	maxArgon2Time      = 16
	maxArgon2Threads   = 16
)

var errArgon2Format = errors.New("iam: not an argon2id secret hash")

// isArgon2id reports whether stored is the Argon2id form.
func isArgon2id(stored []byte) bool {
	return len(stored) > len(argon2idPrefix) && string(stored[:len(argon2idPrefix)]) == argon2idPrefix
}

// hashOperatorSecret is the stored form of a secret a person chose.
func hashOperatorSecret(secret string, p PasswordParams) []byte {
	salt := make([]byte, argon2SaltLen)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(secret), salt, p.Time, p.MemoryKiB, p.Threads, argon2KeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Appendf(nil, "%sv=%d$m=%d,t=%d,p=%d$%s$%s", argon2idPrefix, argon2.Version,
		p.MemoryKiB, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// argon2Hash is a parsed stored Argon2id form.
type argon2Hash struct {
	p    PasswordParams
	salt []byte
	key  []byte
}

// parseArgon2id reads "$argon2id$v=19$m=M,t=T,p=P$salt$key" (the PHC string
// format, unpadded standard base64), refusing other versions and costs
// outside the bounds.
func parseArgon2id(stored []byte) (argon2Hash, error) {
	var h argon2Hash
	if !isArgon2id(stored) {
		return h, errArgon2Format
	}
	parts := strings.Split(string(stored[len(argon2idPrefix):]), "$")
	if len(parts) != 4 || parts[0] != "v="+strconv.Itoa(argon2.Version) {
		return h, errArgon2Format
	}
	var m, t, p uint64
	for _, kv := range strings.Split(parts[1], ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if !ok || err != nil || (len(v) > 1 && v[0] == '0') {
			return h, errArgon2Format
		}
		switch {
		case k == "m" && m == 0:
			m = n
		case k == "t" && t == 0:
			t = n
		case k == "p" && p == 0:
			p = n
		default:
			return h, errArgon2Format
		}
	}
	if t < 1 || t > maxArgon2Time || p < 1 || p > maxArgon2Threads || m < 8*p || m > maxArgon2MemoryKiB {
		return h, errArgon2Format
	}
	b64 := base64.RawStdEncoding.Strict()
	salt, err1 := b64.DecodeString(parts[2])
	key, err2 := b64.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(salt) > 64 || len(key) < 16 || len(key) > 64 {
		return h, errArgon2Format
	}
	h.p = PasswordParams{Time: uint32(t), MemoryKiB: uint32(m), Threads: uint8(p)}
	h.salt, h.key = salt, key
	return h, nil
}

// argon2Slots bounds concurrent Argon2id verifications: each holds its
// memory cost, and a flood of wrong secrets must not take every core or
// gigabytes of memory from the rest of the service.
var argon2Slots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))

// argon2Matches verifies secret against a stored Argon2id form in constant
// time. A malformed form never matches.
func argon2Matches(ctx context.Context, stored []byte, secret string) (bool, error) {
	h, err := parseArgon2id(stored)
	if err != nil {
		return false, nil
	}
	// A free slot is taken without consulting ctx: a fasthttp RequestCtx
	// outside a server (benchmarks) has no Done channel to wait on.
	select {
	case argon2Slots <- struct{}{}:
	default:
		select {
		case argon2Slots <- struct{}{}:
		case <-ctx.Done():
			return false, fmt.Errorf("iam: waiting to verify a client secret: %w", ctx.Err())
		}
	}
	got := argon2.IDKey([]byte(secret), h.salt, h.p.Time, h.p.MemoryKiB, h.p.Threads, uint32(len(h.key)))
	<-argon2Slots
	return subtle.ConstantTimeCompare(got, h.key) == 1, nil
}
