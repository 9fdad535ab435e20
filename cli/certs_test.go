package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/selfsign"
)

// testCA is a certificate authority that issues client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test client CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key}
}

// issue makes a client certificate with that common name and URIs.
func (ca *testCA) issue(t *testing.T, cn string, uris ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, u := range uris {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, pu)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestCertificateBoundToToken: a client certificate stands for the token
// whose ID it names, never for a token that merely has the name its
// certificate was made for. Alice's viewer certificate does not become an
// admin when alice is revoked and an admin token named alice is made.
func TestCertificateBoundToToken(t *testing.T) {
	singleServer(t, "the cluster fixture serves plain HTTP; TLS is the director's listener, the same as one server's")
	ca := newTestCA(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	f := setup(t, func(c *ServerConfig) { c.TLSSelfSigned = true; c.TLSClientCA = caFile })
	base := strings.Replace(f.client.Base, "http://", "https://", 1)
	admin := &api.Client{Base: base, Token: f.client.Token, HTTP: f.httpsWith(nil)}
	whoami := func(cert tls.Certificate) (int, string) {
		t.Helper()
		resp, err := f.httpsWith(&cert).Get(base + "/api/v1/whoami")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var w api.WhoamiResponse
		json.NewDecoder(resp.Body).Decode(&w)
		return resp.StatusCode, string(w.Role)
	}
	viewer, err := admin.CreateToken(t.Context(), api.TokenRequest{Name: "alice", Role: auth.Viewer})
	if err != nil {
		t.Fatal(err)
	}
	byName := ca.issue(t, "alice")
	byID := ca.issue(t, viewer.ID)
	byURI := ca.issue(t, "alice", auth.CertificateURIPrefix+viewer.ID)
	if status, role := whoami(byID); status != http.StatusOK || role != "viewer" {
		t.Errorf("alice's certificate naming her token's ID: %d %q, want viewer", status, role)
	}
	if status, role := whoami(byURI); status != http.StatusOK || role != "viewer" {
		t.Errorf("alice's certificate naming her token's ID as URI: %d %q, want viewer", status, role)
	}

	if _, err := admin.RevokeToken(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	newAlice, err := admin.CreateToken(t.Context(), api.TokenRequest{Name: "alice", Role: auth.Admin})
	if err != nil {
		t.Fatal(err)
	}
	for what, cert := range map[string]tls.Certificate{"her name": byName, "her old token's ID": byID, "her old token's ID as URI": byURI} {
		if status, role := whoami(cert); status != http.StatusUnauthorized {
			t.Errorf("alice's old certificate naming %s, once an admin named alice exists: %d %q, want 401", what, status, role)
		}
	}
	if status, role := whoami(ca.issue(t, "alice", auth.CertificateURIPrefix+newAlice.ID)); status != http.StatusOK || role != "admin" {
		t.Errorf("a certificate made for the new alice: %d %q, want admin", status, role)
	}
}

// httpsWith is an HTTPS client that trusts the fixture's self-signed
// certificate and offers cert, if not nil.
func (f *fixture) httpsWith(cert *tls.Certificate) *http.Client {
	f.t.Helper()
	pool, err := loadPool(filepath.Join(f.dir, "data", selfsign.CertFile))
	if err != nil {
		f.t.Fatal(err)
	}
	tc := &tls.Config{RootCAs: pool}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}}
}
