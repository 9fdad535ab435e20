package selfsign

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A certificate made here is a leaf valid a year; one kept from before,
// a CA valid five years, is made again.
func TestEnsureLeaf(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	old := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "gnomon server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(5 * 365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, old, old, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	os.MkdirAll(filepath.Join(dir, "tls"), 0o700)
	os.WriteFile(filepath.Join(dir, CertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, KeyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)

	cert, made, err := Ensure(dir, []string{"localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !made || cert.Leaf.IsCA || cert.Leaf.KeyUsage&x509.KeyUsageCertSign != 0 {
		t.Fatalf("a kept CA certificate: made %v, IsCA %v", made, cert.Leaf.IsCA)
	}
	if life := cert.Leaf.NotAfter.Sub(cert.Leaf.NotBefore); life > Validity+time.Hour {
		t.Errorf("a new certificate lives %s", life)
	}
	// A leaf is trusted as itself, as clients pin it.
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
		t.Errorf("the pinned leaf does not verify: %v", err)
	}
	if _, made, err := Ensure(dir, []string{"localhost"}, now); err != nil || made {
		t.Errorf("a leaf made here is kept: made %v, %v", made, err)
	}
}
