// Package peakrss reads a process's peak resident set (VmHWM) from
// /proc, for the memory benchmarks and tests.
package peakrss

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Self is this process's peak resident set in KiB.
func Self() (int64, error) { return OfStatus("/proc/self/status") }

// OfPID is process pid's peak resident set in KiB.
func OfPID(pid int) (int64, error) { return OfStatus(fmt.Sprintf("/proc/%d/status", pid)) }

// OfStatus reads the VmHWM line of a /proc status file, in KiB.
func OfStatus(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the peak resident set: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: VmHWM %q: %w", path, v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: no VmHWM line", path)
}

// childPrefix starts the line a benchmark's child process prints with its
// peak resident set, for the parent to read.
const childPrefix = "BENCH hwm_kb="

// ChildLine is the line a benchmark's child prints to report kb.
func ChildLine(kb int64) string { return fmt.Sprintf("%s%d", childPrefix, kb) }

// FromChild reads the peak resident set a child reported with ChildLine
// from its output.
func FromChild(out []byte) (int64, error) {
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, childPrefix); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("the child's line %q: %w", l, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no %q line from the child", childPrefix)
}
