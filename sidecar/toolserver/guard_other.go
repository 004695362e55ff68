//go:build !linux

package toolserver

import "os/exec"

// guarded is empty outside Linux: there is no child subreaper, and the
// server is started directly (see sysproc_other.go).
type guarded struct{}

func wrap(cmd *exec.Cmd) (*guarded, func() (int, error), error) { return nil, nil, nil }

func (g *guarded) abandon() {}
func (g *guarded) end()     {}
