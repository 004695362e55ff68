package robustness_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// randomLineBases are well-formed lines the random client mutates.
var randomLineBases = []string{
	callLine("1", "echo", `{"text":"a","n":[1,2.5,-3e2],"o":{"k":"v"}}`),
	callLine(`"two"`, "order", `{"total":12,"items":[{"sku":"x"}]}`),
	callLine("3", "notinslip", `{}`),
	callLine("4", "hidden", `{"a":null}`),
	`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":"r","result":{"roots":[]}}`,
}

// mutate changes a line the way a careless or hostile client might: a byte
// changed, removed or added, a piece repeated, the line cut.
func mutate(rng *rand.Rand, line string) string {
	b := []byte(line)
	const alphabet = "{}[]\",:0123456789e-.\\u\xff\xc0 aA"
	for n := 1 + rng.IntN(3); n > 0 && len(b) > 0; n-- {
		i := rng.IntN(len(b))
		switch rng.IntN(5) {
		case 0:
			b[i] = alphabet[rng.IntN(len(alphabet))]
		case 1:
			b = append(b[:i], b[i+1:]...)
		case 2:
			b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
		case 3:
			j := i + rng.IntN(len(b)-i)
			b = append(b[:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
		case 4:
			b = b[:i]
		}
	}
	for i, c := range b {
		if c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// barrier sends a tool call and waits for its answer: tool calls are taken
// and answered in order, so every tool call before it has its answer then.
func barrier(t *testing.T, x *executor, i int) {
	t.Helper()
	id := `"barrier-` + strconv.Itoa(i) + `"`
	x.send(callLine(id, "echo", `{}`))
	x.recvFor(id)
}

// A random hostile client: hundreds of mutated lines, refused or taken,
// end with the executor up, answering, and its records agreeing: every
// call the server received has exactly one receipt, compare exits 0 and
// verify says intact. Set ROBUSTNESS_SEED to replay.
func TestHostileClientRandomLines(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	const lines = 300
	for i := 0; i < lines; i++ {
		base := randomLineBases[rng.IntN(len(randomLineBases))]
		line := base
		if rng.IntN(4) != 0 {
			line = mutate(rng, base)
		}
		x.send(line)
		if i%20 == 19 || i == lines-1 {
			barrier(t, x, i)
		}
	}
	if code := x.stop(); code != 0 {
		t.Errorf("exit %d after the random lines", code)
	}
	n := len(serverCalls(t, record))
	t.Logf("%d tool calls reached the server", n)
	checkRecords(t, env, record)
}
