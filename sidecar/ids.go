package sidecar

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"sync/atomic"
)

// callIDs makes the ids the executor sends to the server in place of the
// client's: provared-<number>-<random>, unique for the session (the number)
// and not guessable (12 random bytes each), so that nothing the client sends
// can collide with a request in flight and a late answer can never be taken
// for the answer to a later request.
type callIDs struct{ n atomic.Uint64 }

// IDPrefix begins every id the executor sends to the server.
const IDPrefix = "provared-"

func (c *callIDs) next() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on a supported OS
	}
	return IDPrefix + strconv.FormatUint(c.n.Add(1), 10) + "-" + base64.RawURLEncoding.EncodeToString(b[:])
}
