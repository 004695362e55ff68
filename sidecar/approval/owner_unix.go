//go:build unix

package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// ownerOf names the owner of a file: "uid 1000 (alice)".
func ownerOf(st fs.FileInfo) string {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "the owner of the file (unknown)"
	}
	uid := strconv.FormatUint(uint64(sys.Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return fmt.Sprintf("uid %s (%s)", uid, u.Username)
	}
	return "uid " + uid
}

// openAnswer opens a queue file for reading its answer: never through a
// symbolic link (the owner named as the answerer would be the owner of the
// link's target, not of what was written in the queue), never a FIFO or a
// device (an open or a read that blocks would stop the watch), and never a
// file with a second hard link (a file written elsewhere by someone else,
// linked in). The FileInfo is of the open file, so the owner named is the
// owner of the bytes read.
func openAnswer(path string) (*os.File, fs.FileInfo, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, errors.New("a symbolic link: answer by writing the file itself")
		}
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		_ = fh.Close() // read only: the stat error is the one to report
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		_ = fh.Close() // read only: nothing is lost
		return nil, nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink != 1 {
		_ = fh.Close() // read only: nothing is lost
		return nil, nil, fmt.Errorf("the file has %d hard links: answer by writing a new file renamed into place", sys.Nlink)
	}
	return fh, st, nil
}
