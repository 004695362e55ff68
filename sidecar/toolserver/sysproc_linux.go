package toolserver

import "syscall"

// sysProcAttr puts the guard in its own process group, so that signals
// meant for the executor's group (a terminal's SIGINT) do not reach it. It
// has no Pdeathsig: when the executor dies the guard must live on long
// enough to end the server's tree.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
