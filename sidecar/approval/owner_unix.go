//go:build unix

package approval

import (
	"fmt"
	"io/fs"
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
