//go:build faultinject

package faultinject

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// FaultEnv names the fault point at which a binary built with the
// faultinject tag kills itself: "name" for the first time the point is
// reached, "name#N" for the N-th time. Only the robustness tests
// (sidecar/robustness) build such a binary; the normal build has no fault
// points at all.
const FaultEnv = "MCP_EXECUTOR_FAULT"

var faults struct {
	sync.Mutex
	seen map[string]int
}

// Point sends SIGKILL to this process at once when FaultEnv names this
// point (and, with "#N", this is its N-th passage).
func Point(name string) {
	want := os.Getenv(FaultEnv)
	if want == "" {
		return
	}
	n := 1
	if i := strings.LastIndexByte(want, '#'); i >= 0 {
		k, err := strconv.Atoi(want[i+1:])
		if err != nil || k < 1 {
			return
		}
		want, n = want[:i], k
	}
	if want != name {
		return
	}
	faults.Lock()
	if faults.seen == nil {
		faults.seen = map[string]int{}
	}
	faults.seen[name]++
	hit := faults.seen[name] == n
	faults.Unlock()
	if !hit {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	for {
		time.Sleep(time.Hour) // the signal ends the process before this returns
	}
}

// SignFaultEnv makes the signers of a faultinject build fail: "fail" fails
// the first signature once (the executor's retry must carry the call),
// "hang" makes every signature wait until its context ends (the executor's
// signTimeout must cut it).
const SignFaultEnv = "MCP_EXECUTOR_SIGN_FAULT"

var signFaults struct {
	sync.Mutex
	failed bool
}

type faultySigner struct {
	jwk.Signer
	mode string
}

// Signer is s, or in a build with the faultinject tag and SignFaultEnv set, s failing as it says.
func Signer(s jwk.Signer) jwk.Signer {
	if mode := os.Getenv(SignFaultEnv); mode == "fail" || mode == "hang" {
		return &faultySigner{Signer: s, mode: mode}
	}
	return s
}

func (f *faultySigner) Sign(ctx context.Context, alg string, input []byte) ([]byte, error) {
	switch f.mode {
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "fail":
		signFaults.Lock()
		first := !signFaults.failed
		signFaults.failed = true
		signFaults.Unlock()
		if first {
			return nil, errors.New("injected signing failure (" + SignFaultEnv + "=fail)")
		}
	}
	return f.Signer.Sign(ctx, alg, input)
}
