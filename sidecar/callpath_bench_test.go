package sidecar_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// callPathCalls is how many calls each figure of one round of
// BenchmarkCallPath is measured over.
const callPathCalls = 400

// TestRelayPassesCalls: the bare relay BenchmarkCallPath measures beside
// the executor hands a call to the server and its answer back unchanged.
func TestRelayPassesCalls(t *testing.T) {
	direct, relay := testServerSession(t, "sdk"), testServerSession(t, "relay")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want, err := direct.CallTool(ctx, benchParams)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		got, err := relay.CallTool(ctx, benchParams)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("through the relay: %+v, directly: %+v", got, want)
		}
	}
}

// BenchmarkCallPath measures, side by side in each round (one b.N
// iteration; run it with -benchtime=5x or more), the figures issue 17 asks
// for, and reports the median over the rounds of each ratio:
//
//   - floor: the durable floor of one allowed call, measured here: two
//     appends with fdatasync (a copy-sized line and a book line of a real
//     signed stub, each in its own file in the test's folder, on the same
//     disk as the executor's) and the call's four signatures (Ed25519 and
//     ML-DSA-87 for the stub and for the countersignature);
//   - added-x-floor: (executor − direct) time per call at 1 in flight, over
//     the floor; the go-sdk client and server over real pipes, the
//     executor the real binary;
//   - floor-in-call-ms, added-x-floor-in-call: the same floor paid in a
//     call's rhythm, as the executor pays it: the copy-sized line synced,
//     then a direct call to the server, then the four signatures and the
//     book line synced, less the direct call's own time; and the added
//     time over it. On a virtual machine whose idle cores sleep, a sync or
//     a signature that comes after a wait takes longer than one in a tight
//     loop: the difference between the two floors is that price, which
//     any executor pays, and the rest of the added time is the executor's
//     own (its CPU on the path and its pipe round trip, pipe-rtt-ms);
//   - relay1-ms, relay-added-x-floor, beyond-relay-x-floor: the same calls
//     at 1 in flight through a bare line relay (runRelay: a process that
//     starts the server and copies lines both ways, nothing judged or
//     written), the least any process between client and server adds;
//     its added time over the floor; and the executor's time beyond the
//     relay's over the floor: the floor's own work (1) and what the
//     executor adds to it besides the hop (the rest);
//   - flight16-x-direct: calls/s at 16 in flight through the executor over
//     the same calls made directly;
//   - flight16-x-sign: the same calls/s over what the machine's cores can
//     sign: four signatures per call on GOMAXPROCS goroutines;
//   - direct16-cpu-ms, executor16-cpu-ms, sign-cpu-ms: the CPU time the
//     whole machine (client, executor, server, kernel) spent per call at 16
//     in flight, directly and through the executor, and per call's four
//     signatures, from /proc/stat; busy16-x-cores: the share of the
//     machine's cores busy while the executor ran at 16 in flight. When it
//     is near 1 the calls/s at 16 in flight are bound by the cores, and
//     their ceiling is cores / executor16-cpu-ms;
//   - executor16-proc-cpu-ms, proc-cpu-x-sign: the CPU time the executor's
//     own process (all its threads, not its tool server) spent per call at
//     16 in flight, from /proc/PID/stat, and that over the CPU of the
//     call's four signatures: what the executor costs besides the client
//     and the server, against the least it must spend;
//   - idle-wake-us: how long a goroutine started after the machine has
//     been idle for a millisecond waits before it runs, while its starter
//     keeps working: the price of handing work to another core within one
//     call (tens of microseconds on a virtual machine whose idle cores
//     sleep), which is why the call's signatures gain little from a second
//     goroutine at 1 in flight;
//   - pipe-rtt-ms: one line to a child process over a pipe and back after
//     half a millisecond of quiet (as the executor's line to the server
//     comes after the copy's fsync), the round trip a call through the
//     executor makes once more than a direct call; pipe-rtt-x-floor beside
//     the floor. Back to back, with the cores awake, it takes microseconds.
func BenchmarkCallPath(b *testing.B) {
	direct := directSession(b)
	relay := relaySession(b)
	h := startWith(b, "sdk", baseOptions())
	executor := h.client(context.Background())
	defer executor.Close()
	fl := newFloor(b)
	defer fl.close()
	echo := startEcho(b)
	warm(b, direct)
	warm(b, relay)
	warm(b, executor)

	var added, flightDirect, flightSign, floorMS, direct1MS, exec1MS, sign16, exec16 []float64
	var directCPU, execCPU, signCPU, busy16, wake, rtt, rttFloor, inCallMS, addedInCall, relay1MS, hop, beyondRelay, procCPU, procXSign []float64
	b.ResetTimer()
	for range b.N {
		floor := fl.perCall(b, callPathCalls/4)
		d1 := perCall(b, direct, callPathCalls/2, 1)
		e1 := perCall(b, executor, callPathCalls/2, 1)
		inCall := fl.perCallBeside(b, direct, callPathCalls/4) - d1
		r1 := perCall(b, relay, callPathCalls/2, 1)
		c0 := machineCPU(b)
		d16 := perCall(b, direct, callPathCalls, 16)
		c1 := machineCPU(b)
		p1 := processCPU(b, h.pid)
		e16 := perCall(b, executor, callPathCalls, 16)
		c2 := machineCPU(b)
		p2 := processCPU(b, h.pid)
		sc := signCapacity(b, fl, callPathCalls/2)
		c3 := machineCPU(b)
		directCPU = append(directCPU, ms((c1-c0)/callPathCalls))
		execCPU = append(execCPU, ms((c2-c1)/callPathCalls))
		signCPU = append(signCPU, ms((c3-c2)/(callPathCalls/2)))
		procCPU = append(procCPU, ms((p2-p1)/callPathCalls))
		procXSign = append(procXSign, float64((p2-p1)/callPathCalls)/float64((c3-c2)/(callPathCalls/2)))
		busy16 = append(busy16, float64(c2-c1)/float64(e16*callPathCalls)/float64(runtime.NumCPU()))
		wake = append(wake, float64(idleWake())/float64(time.Microsecond))
		r := echo.roundTrip(b, callPathCalls/2)
		rtt = append(rtt, ms(r))
		rttFloor = append(rttFloor, float64(r)/float64(floor))
		added = append(added, float64(e1-d1)/float64(floor))
		inCallMS = append(inCallMS, ms(inCall))
		addedInCall = append(addedInCall, float64(e1-d1)/float64(inCall))
		relay1MS = append(relay1MS, ms(r1))
		hop = append(hop, float64(r1-d1)/float64(floor))
		beyondRelay = append(beyondRelay, float64(e1-r1)/float64(floor))
		flightDirect = append(flightDirect, float64(d16)/float64(e16))
		flightSign = append(flightSign, float64(sc)/float64(e16))
		floorMS = append(floorMS, ms(floor))
		direct1MS = append(direct1MS, ms(d1))
		exec1MS = append(exec1MS, ms(e1))
		sign16 = append(sign16, 1/float64(sc.Seconds()))
		exec16 = append(exec16, 1/float64(e16.Seconds()))
	}
	b.StopTimer()
	b.ReportMetric(median(floorMS), "floor-ms")
	b.ReportMetric(median(direct1MS), "direct1-ms")
	b.ReportMetric(median(exec1MS), "executor1-ms")
	b.ReportMetric(median(added), "added-x-floor")
	b.ReportMetric(median(inCallMS), "floor-in-call-ms")
	b.ReportMetric(median(addedInCall), "added-x-floor-in-call")
	b.ReportMetric(median(relay1MS), "relay1-ms")
	b.ReportMetric(median(hop), "relay-added-x-floor")
	b.ReportMetric(median(beyondRelay), "beyond-relay-x-floor")
	b.ReportMetric(median(exec16), "executor16-calls/s")
	b.ReportMetric(median(sign16), "sign-calls/s")
	b.ReportMetric(median(flightDirect), "flight16-x-direct")
	b.ReportMetric(median(flightSign), "flight16-x-sign")
	b.ReportMetric(median(directCPU), "direct16-cpu-ms")
	b.ReportMetric(median(execCPU), "executor16-cpu-ms")
	b.ReportMetric(median(signCPU), "sign-cpu-ms")
	b.ReportMetric(median(busy16), "busy16-x-cores")
	b.ReportMetric(median(procCPU), "executor16-proc-cpu-ms")
	b.ReportMetric(median(procXSign), "proc-cpu-x-sign")
	b.ReportMetric(median(wake), "idle-wake-us")
	b.ReportMetric(median(rtt), "pipe-rtt-ms")
	b.ReportMetric(median(rttFloor), "pipe-rtt-x-floor")
}

// echoChild is a child process that writes back each line it reads.
type echoChild struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func startEcho(b *testing.B) *echoChild {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), testServerEnv+"=echo")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait() // it ends at the end of its input
	})
	return &echoChild{in: in, out: bufio.NewReader(out)}
}

// roundTrip is the mean wall time of one line there and back, each after
// half a millisecond of quiet, over n lines.
func (e *echoChild) roundTrip(b *testing.B, n int) time.Duration {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var total time.Duration
	for range n {
		time.Sleep(500 * time.Microsecond)
		start := time.Now()
		if _, err := e.in.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := e.out.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	return total / time.Duration(n)
}

// idleWake is the median, over 50 tries, of the time a goroutine started
// after a millisecond of idleness waits before it runs while the goroutine
// that started it keeps a core busy.
func idleWake() time.Duration {
	lags := make([]float64, 0, 50)
	for range 50 {
		time.Sleep(time.Millisecond)
		start := time.Now()
		started := make(chan time.Time, 1)
		go func() { started <- time.Now() }()
		for time.Since(start) < 200*time.Microsecond { // the starter's own work
		}
		lags = append(lags, float64((<-started).Sub(start)))
	}
	return time.Duration(median(lags))
}

// machineCPU is the CPU time every process of the machine has used since
// it started: the busy columns of /proc/stat's first line (user, nice,
// system, irq, softirq, steal), in its clock ticks of 10 ms.
func machineCPU(b *testing.B) time.Duration {
	b.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(first)
	if len(f) < 9 || f[0] != "cpu" {
		b.Fatalf("/proc/stat starts %q", first)
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			b.Fatalf("/proc/stat: %v", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// processCPU is the CPU time the process pid has used (its utime and
// stime in /proc/PID/stat, every thread, not its children), in clock ticks
// of 10 ms.
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	if pid == 0 {
		b.Fatal("the executor runs in this process: its CPU cannot be told apart")
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it start after the last ')'.
	rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	var ticks int64
	for _, i := range []int{11, 12} { // utime, stime: fields 14 and 15 of the line
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// directSession is the go-sdk client connected straight to the test server.
func directSession(b *testing.B) *mcp.ClientSession { return testServerSession(b, "sdk") }

// relaySession is the go-sdk client connected to the test server through
// a bare line relay (runRelay).
func relaySession(b *testing.B) *mcp.ClientSession { return testServerSession(b, "relay") }

// testServerSession is the go-sdk client connected to this binary run in
// the given testServerEnv mode.
func testServerSession(b testing.TB, mode string) *mcp.ClientSession {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), testServerEnv+"="+mode, recordEnv+"="+filepath.Join(b.TempDir(), "record.jsonl"))
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

var benchParams = &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bench"}}

func warm(b *testing.B, cs *mcp.ClientSession) {
	for range 20 {
		if _, err := cs.CallTool(context.Background(), benchParams); err != nil {
			b.Fatal(err)
		}
	}
}

// perCall is the wall time per call of n calls made inFlight at a time.
func perCall(b *testing.B, cs *mcp.ClientSession, n, inFlight int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for w := range inFlight {
		wg.Go(func() {
			for i := w; i < n; i += inFlight {
				res, err := cs.CallTool(context.Background(), benchParams)
				if err != nil || res.IsError {
					b.Errorf("call: %v %+v", err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start) / time.Duration(n)
}

// floor holds what the durable floor is measured with.
type floor struct {
	agent, exec *jwk.LocalSigner
	copyF, book *os.File
	copyLine    []byte
	bookLine    []byte
	fields      receipt.StubFields
}

func newFloor(b *testing.B) *floor {
	local := func() *jwk.LocalSigner {
		s, err := jwk.NewLocalSigner(jwk.NewSeeds())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	fl := &floor{agent: local(), exec: local()}
	dir := b.TempDir()
	var err error
	if fl.copyF, err = os.OpenFile(filepath.Join(dir, "copy.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		b.Fatal(err)
	}
	if fl.book, err = os.OpenFile(filepath.Join(dir, "book.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		b.Fatal(err)
	}
	fl.fields = receipt.StubFields{Slip: canon.Fingerprint([]byte("slip")), Seq: 1, Previous: canon.Fingerprint([]byte("prev")),
		Action: "provared.data.read", With: "executor", When: time.Now().UTC().Truncate(time.Second),
		Details: []record.Detail{record.TextDetail(receipt.LabelCall, "x-1"), record.TextDetail(receipt.LabelToolName, "echo"),
			record.TextDetail(receipt.LabelToolResult, "{}")}}
	line, err := fl.fields.Sign(context.Background(), fl.agent, fl.exec, time.Now().UTC())
	if err != nil {
		b.Fatal(err)
	}
	if fl.bookLine, err = line.Bytes(); err != nil {
		b.Fatal(err)
	}
	fl.bookLine = append(fl.bookLine, '\n')
	// A sent line's size, as the copy writes one (~600 bytes with its details and tag).
	fl.copyLine = append(make([]byte, 0, 601), make([]byte, 600)...)
	for i := range fl.copyLine {
		fl.copyLine[i] = 'a'
	}
	fl.copyLine = append(fl.copyLine, '\n')
	return fl
}

func (fl *floor) close() { fl.copyF.Close(); fl.book.Close() }

// sign makes one call's four signatures.
func (fl *floor) sign(b *testing.B) {
	if _, err := fl.fields.Sign(context.Background(), fl.agent, fl.exec, time.Now().UTC()); err != nil {
		b.Fatal(err)
	}
}

func (fl *floor) perCall(b *testing.B, n int) time.Duration {
	start := time.Now()
	for range n {
		fl.appendSynced(b, fl.copyF, fl.copyLine)
		fl.appendSynced(b, fl.book, fl.bookLine)
		fl.sign(b)
	}
	return time.Since(start) / time.Duration(n)
}

// perCallBeside is the wall time per call of n rounds of the floor's work
// in a call's order, with a direct call where the server has it: the copy
// line synced, the call made, the four signatures, the book line synced.
func (fl *floor) perCallBeside(b *testing.B, direct *mcp.ClientSession, n int) time.Duration {
	start := time.Now()
	for range n {
		fl.appendSynced(b, fl.copyF, fl.copyLine)
		if res, err := direct.CallTool(context.Background(), benchParams); err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
		fl.sign(b)
		fl.appendSynced(b, fl.book, fl.bookLine)
	}
	return time.Since(start) / time.Duration(n)
}

// appendSynced appends line to f with one write and one fdatasync.
func (fl *floor) appendSynced(b *testing.B, f *os.File, line []byte) {
	if _, err := f.Write(line); err != nil {
		b.Fatal(err)
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		b.Fatal(err)
	}
}

// signCapacity is the wall time per call of n calls' four signatures made
// on GOMAXPROCS goroutines.
func signCapacity(b *testing.B, fl *floor, n int) time.Duration {
	procs := runtime.GOMAXPROCS(0)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range procs {
		wg.Go(func() {
			for i := w; i < n; i += procs {
				fl.sign(b)
			}
		})
	}
	wg.Wait()
	return time.Since(start) / time.Duration(n)
}
