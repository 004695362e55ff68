//go:build !race

package e2e_test

// raceEnabled says the tests run under the race detector; the executor
// binary they start is then built with it too.
const raceEnabled = false
