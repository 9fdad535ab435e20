package cli

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/internal/selfsign"
)

// TestTLSHardening: over TLS 1.2 the server offers only forward-secret
// AEAD suites (a client offering CBC suites only is refused), every answer
// over TLS carries HSTS, and the self-signed certificate is a leaf that
// is not a CA and lives a year, which the command line still trusts.
func TestTLSHardening(t *testing.T) {
	singleServer(t, "the cluster fixture serves plain HTTP; TLS is the director's listener, the same as one server's")
	f := setup(t, func(c *ServerConfig) { c.TLSSelfSigned = true })
	addr := strings.TrimPrefix(f.client.Base, "http://")
	pool, err := loadPool(filepath.Join(f.dir, "data", selfsign.CertFile))
	if err != nil {
		t.Fatal(err)
	}
	handshake := func(suites ...uint16) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr,
			&tls.Config{RootCAs: pool, ServerName: "localhost", MaxVersion: tls.VersionTLS12, CipherSuites: suites})
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, s := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256} {
		if err := handshake(s); err == nil {
			t.Errorf("TLS 1.2 with %s only: accepted, want refused", tls.CipherSuiteName(s))
		}
	}
	if err := handshake(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256); err != nil {
		t.Errorf("TLS 1.2 with an AEAD suite: %v", err)
	}

	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get("Strict-Transport-Security"); !strings.Contains(h, "max-age=31536000") {
		t.Errorf("Strict-Transport-Security over TLS: %q", h)
	}

	c, err := tls.LoadX509KeyPair(filepath.Join(f.dir, "data", selfsign.CertFile), filepath.Join(f.dir, "data", selfsign.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	leaf := c.Leaf
	if leaf.IsCA || leaf.KeyUsage&x509.KeyUsageCertSign != 0 {
		t.Errorf("the self-signed certificate is a CA (IsCA %v, key usage %b)", leaf.IsCA, leaf.KeyUsage)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life > 366*24*time.Hour+time.Hour {
		t.Errorf("the self-signed certificate lives %s, want a year", life)
	}
}
