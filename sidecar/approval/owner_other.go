//go:build !unix

package approval

import (
	"fmt"
	"io/fs"
	"os"
)

// ownerOf names the owner of a file where the system does not say.
func ownerOf(fs.FileInfo) string { return "the owner of the file (unknown)" }

// openAnswer opens a queue file for reading its answer: a regular file only
// (see the unix version).
func openAnswer(path string) (*os.File, fs.FileInfo, error) {
	if st, err := os.Lstat(path); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() {
		_ = fh.Close() // read only: nothing is lost
		return nil, nil, fmt.Errorf("not a regular file")
	}
	return fh, st, nil
}
