// Package selfsign makes and keeps the self-signed certificate of a server
// that has no certificate of its own: made once, kept in the data
// directory, and trusted by clients that pin it.
package selfsign

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Files are where a data directory keeps its certificate and key.
const (
	CertFile = "tls/cert.pem"
	KeyFile  = "tls/key.pem"
)

// Validity is how long a certificate made here is valid: a year, made
// again 30 days before it ends.
const Validity = 365 * 24 * time.Hour

// Ensure returns the certificate of the data directory, making it when
// there is none, or when the one there expires within 30 days, does not
// name every host in names (host names or IP addresses), or is one this
// package made before it made leaves only (a CA, or valid longer than
// Validity). It reports whether it made a new one.
func Ensure(dataDir string, names []string, now time.Time) (tls.Certificate, bool, error) {
	certPath, keyPath := filepath.Join(dataDir, CertFile), filepath.Join(dataDir, KeyFile)
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	switch {
	case err == nil && covers(cert.Leaf, names) && now.Add(30*24*time.Hour).Before(cert.Leaf.NotAfter) && leaf(cert.Leaf):
		return cert, false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return tls.Certificate{}, false, fmt.Errorf("%s: %w", certPath, err)
	}
	certPEM, keyPEM, err := Make(names, now)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	if err := os.MkdirAll(filepath.Dir(certPath), 0o700); err != nil {
		return tls.Certificate{}, false, err
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, false, err
	}
	if err := os.WriteFile(certPath, certPEM, 0o600); err != nil {
		return tls.Certificate{}, false, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	return cert, true, err
}

// leaf reports whether a certificate is a leaf as Make makes them: not a
// CA, which could sign certificates for any name with the key of a
// server, and valid no longer than Validity.
func leaf(c *x509.Certificate) bool {
	return !c.IsCA && c.KeyUsage&x509.KeyUsageCertSign == 0 && c.NotAfter.Sub(c.NotBefore) <= Validity+time.Hour
}

// covers reports whether a certificate names every host.
func covers(c *x509.Certificate, names []string) bool {
	for _, n := range names {
		if c.VerifyHostname(n) != nil {
			return false
		}
	}
	return true
}

// Make makes a self-signed certificate (ECDSA P-256) for the hosts, and its
// key, PEM-encoded: a leaf, not a CA, valid for Validity. Clients trust it
// by pinning it: Go and OpenSSL take a self-signed leaf given as the
// trusted certificate, and browsers refuse a CA certificate that a server
// presents as its own.
func Make(names []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "gnomon server", Organization: []string{"gnomon"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  false,
	}
	for _, n := range names {
		if ip := net.ParseIP(strings.Trim(n, "[]")); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if !slices.Contains(tmpl.DNSNames, n) {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), nil
}

// Fingerprint is the SHA-256 fingerprint of a certificate, as browsers and
// openssl x509 -fingerprint -sha256 show it.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}
