package cli

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/internal/selfsign"
)

// loopback reports whether a listen address reaches only this machine.
func loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serverTLS is the TLS configuration of a server (nil: plain HTTP), and
// the host names its certificate gives, which requests may name.
func (s *Server) serverTLS() (*tls.Config, []string, error) {
	cfg := s.cfg
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, nil, usageErr("--tls-cert and --tls-key go together")
	}
	if cfg.TLSCert != "" && cfg.TLSSelfSigned {
		return nil, nil, usageErr("--tls-self-signed makes a certificate: give it or --tls-cert, not both")
	}
	if cfg.TLSClientCA != "" && cfg.TLSCert == "" && !cfg.TLSSelfSigned {
		return nil, nil, usageErr("--tls-client-ca needs TLS: give --tls-cert and --tls-key, or --tls-self-signed")
	}
	var cert tls.Certificate
	switch {
	case cfg.TLSCert != "":
		var err error
		if cert, err = tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey); err != nil {
			return nil, nil, usageErr("--tls-cert, --tls-key: %v", err)
		}
	case cfg.TLSSelfSigned:
		names := []string{"localhost", "127.0.0.1", "::1"}
		if h, err := os.Hostname(); err == nil {
			names = append(names, h)
		}
		names = append(names, cfg.PublicNames...)
		if host, _, err := net.SplitHostPort(cfg.Listen); err == nil && host != "" && !net.ParseIP(host).IsUnspecified() {
			names = append(names, host)
		}
		c, made, err := selfsign.Ensure(cfg.Data, names, clock.Wall.Now()) // certificates live in real time
		if err != nil {
			return nil, nil, fmt.Errorf("--tls-self-signed: %w", err)
		}
		cert = c
		what := "self-signed certificate kept"
		if made {
			what = "self-signed certificate made"
		}
		cfg.Logger.Info(what+": clients on this machine trust it through the data directory; give others its fingerprint",
			"file", filepath.Join(cfg.Data, selfsign.CertFile), "sha256", selfsign.Fingerprint(cert.Certificate[0]))
	default:
		if !loopback(cfg.Listen) && !cfg.InsecureListen {
			return nil, nil, usageErr("--listen %s reaches beyond this machine: give --tls-cert and --tls-key, or --tls-self-signed (--insecure-listen serves plain HTTP, for a network you trust)", cfg.Listen)
		}
		if !loopback(cfg.Listen) {
			cfg.Logger.Warn("INSECURE: serving plain HTTP beyond this machine (--insecure-listen): tokens and definitions cross the network in clear", "listen", cfg.Listen)
		}
		return nil, nil, nil
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, CipherSuites: aeadSuites}
	if cfg.TLSClientCA != "" {
		pool, err := loadPool(cfg.TLSClientCA)
		if err != nil {
			return nil, nil, usageErr("--tls-client-ca: %v", err)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	var hosts []string
	if cert.Leaf != nil {
		hosts = cert.Leaf.DNSNames
	}
	return tc, hosts, nil
}

// aeadSuites are the TLS 1.2 cipher suites a server offers: forward
// secret key exchange and authenticated encryption only (no CBC, no RSA
// key exchange). TLS 1.3's suites are all AEAD and not configurable.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// hsts tells browsers to reach the server over HTTPS only, for a year,
// on every answer over TLS.
func hsts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		}
		h.ServeHTTP(w, r)
	})
}

// loadPool reads PEM certificates into a pool.
func loadPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// clientTLS is the TLS configuration of the command line's client: the
// certificate authority of caFile (found by resolve: --ca-cert,
// $GNOMON_CA_CERT, a context's, the self-signed certificate of a server on
// this machine), else the system's; and a client certificate from
// $GNOMON_CLIENT_CERT and $GNOMON_CLIENT_KEY.
func clientTLS(env *Env, caFile string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := loadPool(caFile)
		if err != nil {
			return nil, usageErr("CA certificate: %v", err)
		}
		tc.RootCAs = pool
	}
	certFile, keyFile := env.Getenv("GNOMON_CLIENT_CERT"), env.Getenv("GNOMON_CLIENT_KEY")
	if (certFile == "") != (keyFile == "") {
		return nil, usageErr("$GNOMON_CLIENT_CERT and $GNOMON_CLIENT_KEY go together")
	}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, usageErr("client certificate: %v", err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc, nil
}

// httpsClient is an HTTP client with a TLS configuration.
func httpsClient(tc *tls.Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return &http.Client{Timeout: 60 * time.Second, Transport: tr}
}

// isHTTPS reports whether a server URL is https.
func isHTTPS(base string) bool { return strings.HasPrefix(strings.ToLower(base), "https://") }
