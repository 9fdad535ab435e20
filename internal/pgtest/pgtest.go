// Package pgtest gives tests a fresh PostgreSQL database of their own on
// the machine's server, so that tests of several packages run in parallel,
// and (Start) a PostgreSQL server of their own for tests that restart or
// kill it.
//
// The server is GNOMON_TEST_PG (default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable). When it
// cannot be reached a test is skipped, but fails when CI is "true": CI
// runs every PostgreSQL test.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Base returns the URL of the server's maintenance database.
func Base() string {
	if u := os.Getenv("GNOMON_TEST_PG"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// URL creates a new, empty database, dropped when the test ends, and
// returns its URL.
func URL(tb testing.TB) string {
	tb.Helper()
	// CREATE DATABASE copies the template and waits for a checkpoint: with
	// the databases of other tests being created and dropped on a loaded
	// machine, it took longer than ten seconds in a run of make test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := Base()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL at %s is not reachable, and CI runs every PostgreSQL test: %v", redact(base), err)
		}
		tb.Skipf("PostgreSQL at %s is not reachable: %v", redact(base), err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	rand.Read(b[:])
	name := "gnomon_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Logf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("drop database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
