//go:build faultinject

package faultinject

import (
	"os"
	"strconv"
)

// FullAtEnv, in a binary built with the faultinject tag, sets the number of
// book entries from which the executor takes no new call (normally
// book.MaxEntries − book.FullReserve), so that the robustness tests can
// fill a book without writing 99,000 entries.
const FullAtEnv = "MCP_EXECUTOR_FULL_AT"

// FullAt is n, or the number FullAtEnv names.
func FullAt(n int) int {
	if v, err := strconv.Atoi(os.Getenv(FullAtEnv)); err == nil && v > 0 {
		return v
	}
	return n
}
