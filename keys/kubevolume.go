package keys

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// effectiveMode is the mode a secret file's check judges. A file of a Kubernetes Secret, ConfigMap or
// projected volume (the kubelet's atomic-writer layout: the name is a link into the folder's ..data)
// always has group read, whatever the volume's defaultMode says, because the kubelet gives the pod's
// fsGroup access to every file; and only the containers that mount the volume can reach it. So the
// group's read bit says nothing there and is not warned about; access for others still is refused.
func effectiveMode(path string, perm fs.FileMode) fs.FileMode {
	if perm&0o020 == 0 && onKubeletVolume(path) {
		return perm &^ 0o040
	}
	return perm
}

// onKubeletVolume reports whether path is a file of a volume the kubelet writes atomically: path is a
// symbolic link, its folder holds the link ..data, and path resolves into the folder ..data names.
func onKubeletVolume(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	data := filepath.Join(filepath.Dir(path), "..data")
	di, err := os.Lstat(data)
	if err != nil || di.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	dataDir, err := filepath.EvalSymlinks(data)
	if err != nil {
		return false
	}
	return strings.HasPrefix(target, dataDir+string(filepath.Separator))
}
