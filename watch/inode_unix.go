//go:build unix

package watch

import (
	"io/fs"
	"syscall"
)

// inode returns a file's inode and device numbers.
func inode(fi fs.FileInfo) (ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), uint64(st.Dev) //nolint:unconvert // the types differ between systems
	}
	return 0, 0
}
