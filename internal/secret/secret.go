// Package secret reads secrets from files that only their owner may read:
// tokens, passwords.
package secret

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxSize bounds a secret file: a token or a password, not a document.
const MaxSize = 4096

// Read returns the content of the file at path without the white space at
// its ends. It refuses a file that is not a regular file, that others than
// its owner can read or write, that is larger than MaxSize or that holds
// nothing.
func Read(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s can be read by others (mode %04o): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxSize {
		return "", fmt.Errorf("%s holds more than %d bytes", path, MaxSize)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}
