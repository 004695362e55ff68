//go:build unix && !linux

package toolserver

import "syscall"

// sysProcAttr puts the server in its own process group. Outside Linux there
// is no Pdeathsig: the server outlives a killed executor until its stdin
// closes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
