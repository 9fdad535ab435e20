package secret

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if s, err := Read(write("ok", "s3cret\r\n", 0o600)); err != nil || s != "s3cret" {
		t.Errorf("Read = %q, %v", s, err)
	}
	for _, tc := range []struct{ path, want string }{
		{write("open", "x\n", 0o644), "can be read by others (mode 0644): chmod 600 it"},
		{write("empty", "\n", 0o600), "is empty"},
		{write("big", strings.Repeat("x", MaxSize+1), 0o600), "holds more than 4096 bytes"},
		{dir, "is not a file"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		if _, err := Read(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
