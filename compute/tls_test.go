package compute

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"svc/compute/member"
	"svc/internal/await"
)

// selfSigned writes a fresh certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "svc-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLSListener(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	// cmd/svc loads the pair named by SVC_TLS_CERT_FILE/SVC_TLS_KEY_FILE
	// the same way (TestComputeConfig).
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s, addr := startServer(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}})
	m, err := member.Connect(context.Background(), member.Config{Endpoint: addr, Token: "m2m-t1", Tags: []string{"x"},
		TLS: &tls.Config{RootCAs: pool}, Log: slog.New(slog.DiscardHandler)}, member.Handlers{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	await.Until(t, await.Long, func() bool { return s.Members("t1") == 1 }, "member count")
	// A plaintext member cannot join a TLS listener.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := member.Connect(ctx, member.Config{Endpoint: addr, Token: "m2m-t1", JoinTimeout: time.Second, Log: slog.New(slog.DiscardHandler)}, member.Handlers{}); err == nil {
		t.Fatal("plaintext member joined a TLS listener")
	}
}
