// Package testkeys hands tests fixed RSA-2048 keys checked in under
// testdata, so no test binary generates one: a 2048-bit generation costs
// seconds of CPU under -race, and the tests only need keys that differ from
// each other, not fresh ones. Keys are test fixtures only; nothing outside
// tests imports this package.
package testkeys

import (
	"crypto/rsa"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

//go:embed testdata/rsa*.pem
var files embed.FS

// N is the number of distinct keys: RSA(i) and RSA(j) differ for i != j
// when both are below N.
const N = 8

var (
	once sync.Once
	keys [N]*rsa.PrivateKey
	pems [N]string
)

func load() {
	for i := range N {
		b, err := files.ReadFile(fmt.Sprintf("testdata/rsa%d.pem", i))
		if err != nil {
			panic(err)
		}
		blk, _ := pem.Decode(b)
		if blk == nil {
			panic(fmt.Sprintf("testkeys: testdata/rsa%d.pem holds no PEM block", i))
		}
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			panic(fmt.Sprintf("testkeys: testdata/rsa%d.pem: %v", i, err))
		}
		keys[i] = k.(*rsa.PrivateKey)
		pems[i] = string(b)
	}
}

// RSA returns the i-th key (0 <= i < N).
func RSA(i int) *rsa.PrivateKey {
	once.Do(load)
	return keys[i]
}

// PEM returns the i-th key as a PKCS #8 "PRIVATE KEY" PEM block.
func PEM(i int) string {
	once.Do(load)
	return pems[i]
}

// File writes the i-th key as PEM to a file in a fresh temporary directory
// of t (mode 0600) and returns its path.
func File(t testing.TB, i int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("key%d.pem", i))
	if err := os.WriteFile(path, []byte(PEM(i)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
