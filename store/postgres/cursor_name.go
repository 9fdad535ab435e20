package postgres

import (
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// A cursor's name is stored as it is when PostgreSQL's text can hold it;
// else (a file watcher's memory names its path after a NUL byte, and a
// path need not be UTF-8) as hexPrefix and its bytes in hex.
const hexPrefix = "hex:"

// encodeName returns the stored form of a cursor's name.
func encodeName(name string) string {
	if utf8.ValidString(name) && !strings.ContainsRune(name, 0) && !strings.HasPrefix(name, hexPrefix) {
		return name
	}
	return hexPrefix + hex.EncodeToString([]byte(name))
}

// decodeName returns the name stored as s.
func decodeName(s string) string {
	h, ok := strings.CutPrefix(s, hexPrefix)
	if !ok {
		return s
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return s
	}
	return string(b)
}

// encodeNames returns the stored forms of names.
func encodeNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = encodeName(n)
	}
	return out
}
