package toolserver

import "syscall"

// sysProcAttr puts the server in its own process group and has the kernel
// kill it when the thread that started it (and so the executor) dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
