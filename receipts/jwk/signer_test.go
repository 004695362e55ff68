package jwk

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// TestLocalSignerFromVectorSeeds is a known-answer check of how two seeds
// become a key set: the agent seeds of tool-scenarios.json, scenario 1,
// must give exactly the agent keys inside that scenario's signed slip.
func TestLocalSignerFromVectorSeeds(t *testing.T) {
	f := readVectors(t, "tool-scenarios.json")
	var c struct {
		World struct {
			Keys struct {
				Agent struct{ Ed, Ml string } `json:"agent"`
			} `json:"keys"`
			Records struct {
				R1 string `json:"r1"`
			} `json:"records"`
		} `json:"world"`
	}
	if err := json.Unmarshal(f.Cases[0], &c); err != nil {
		t.Fatal(err)
	}
	edSeed, err := canon.UnB64(c.World.Keys.Agent.Ed)
	if err != nil {
		t.Fatal(err)
	}
	mlSeed, err := canon.UnB64(c.World.Keys.Agent.Ml)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLocalSigner(edSeed, mlSeed)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Slip struct {
			Payload string `json:"payload"`
		} `json:"slip"`
	}
	if err := json.Unmarshal([]byte(c.World.Records.R1), &line); err != nil {
		t.Fatal(err)
	}
	content, err := canon.UnB64(line.Slip.Payload)
	if err != nil {
		t.Fatal(err)
	}
	slip := jsonValue(t, content).(map[string]any)
	want := slip["agent"].(map[string]any)["keys"]
	if got := s.Keys().Value(); !reflect.DeepEqual(got, want) {
		t.Fatalf("key set from seeds differs from the slip's agent keys")
	}
	ks, err := CheckKeySet(want)
	if err != nil {
		t.Fatal(err)
	}
	if !ks.Equal(s.Keys()) || ks.Fingerprint() != s.Keys().Fingerprint() || ks.Fingerprint() == "" {
		t.Fatalf("checked key set and signer's key set differ")
	}
}

func TestLocalSignerSignsBothMethods(t *testing.T) {
	s, err := NewLocalSigner(NewSeeds())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("eyJ0eXAiOiJ2bmQucHJvdmFyZWQuc3R1Yi52MCtqc29uIiwiYWxnIjoiRWQyNTUxOSJ9.e30")
	for _, alg := range KeySetAlgs {
		sig, err := s.Sign(context.Background(), alg, msg)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		k := s.Keys().Key(alg)
		if !k.Verify(msg, sig) {
			t.Fatalf("%s: own signature does not check", alg)
		}
		bad := append([]byte(nil), msg...)
		bad[len(bad)-1] ^= 1
		if k.Verify(bad, sig) {
			t.Fatalf("%s: signature checks over other bytes", alg)
		}
		if s.Keys().Key(otherAlg(alg)).Verify(msg, sig) {
			t.Fatalf("%s: signature checks under the other key", alg)
		}
	}
	if _, err := s.Sign(context.Background(), "ES256", msg); err == nil {
		t.Fatal("signed with a method the set does not hold")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Sign(ctx, Ed25519, msg); err == nil {
		t.Fatal("signed with a cancelled context")
	}
}

func otherAlg(alg string) string {
	if alg == Ed25519 {
		return MLDSA87
	}
	return Ed25519
}

func TestNewLocalSignerRefusesBadSeeds(t *testing.T) {
	for _, n := range []int{0, 31, 33, 64} {
		if _, err := NewLocalSigner(make([]byte, n), make([]byte, 32)); err == nil {
			t.Fatalf("accepted an Ed25519 seed of %d bytes", n)
		}
		if _, err := NewLocalSigner(make([]byte, 32), make([]byte, n)); err == nil {
			t.Fatalf("accepted an ML-DSA seed of %d bytes", n)
		}
	}
	a, b := NewSeeds()
	c, d := NewSeeds()
	if len(a) != 32 || len(b) != 32 || string(a) == string(c) || string(b) == string(d) || string(a) == string(b) {
		t.Fatal("NewSeeds does not give fresh 32-byte seeds")
	}
}

func TestKeySetShapes(t *testing.T) {
	s, err := NewLocalSigner(NewSeeds())
	if err != nil {
		t.Fatal(err)
	}
	ed, ml := s.Keys().Ed25519.JWK, s.Keys().MLDSA87.JWK
	tests := []struct {
		name string
		v    any
		ok   bool
	}{
		{"two keys", []any{ed, ml}, true},
		{"the other order", []any{ml, ed}, false},
		{"one key", []any{ed}, false},
		{"three keys", []any{ed, ml, ml}, false},
		{"an object", map[string]any{"0": ed, "1": ml}, false},
		{"nil", nil, false},
		{"a key that is null", []any{ed, nil}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := CheckKeySet(tc.v)
			if tc.ok {
				if err != nil || ks.IsZero() {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if problem.Code(err) != CodeBadKey || !ks.IsZero() {
				t.Fatalf("accepted")
			}
		})
	}
	var zero KeySet
	if zero.Value() != nil || zero.Fingerprint() != "" || zero.Equal(zero) || zero.Key("x") != nil {
		t.Fatal("the zero key set must hold nothing and equal nothing")
	}
}

// TestLocalSignerConcurrent signs from many goroutines at once with one
// signer, as the executor does with calls in flight (run with -race).
func TestLocalSignerConcurrent(t *testing.T) {
	s, err := NewLocalSigner(NewSeeds())
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			msg := []byte{byte(i)}
			alg := KeySetAlgs[i%2]
			sig, err := s.Sign(context.Background(), alg, msg)
			if err == nil && !s.Keys().Key(alg).Verify(msg, sig) {
				err = errors.New("signature does not check")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalSignerAppendSign: AppendSign appends a signature that checks
// (Ed25519's the very one Sign gives) after what dst holds, leaves those
// bytes as they were, and reuses dst's room when it has enough; it refuses
// what Sign refuses.
func TestLocalSignerAppendSign(t *testing.T) {
	s, err := NewLocalSigner(NewSeeds())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("eyJhbGciOiJNTC1EU0EtODcifQ.e30")
	for _, alg := range KeySetAlgs {
		for _, dst := range [][]byte{nil, []byte("prefix"), make([]byte, 3, 8192)} {
			before := string(dst)
			out, err := s.AppendSign(context.Background(), alg, dst, msg)
			if err != nil {
				t.Fatalf("%s: %v", alg, err)
			}
			if string(out[:len(before)]) != before {
				t.Fatalf("%s: the bytes before the signature changed", alg)
			}
			sig := out[len(before):]
			if !s.Keys().Key(alg).Verify(msg, sig) {
				t.Fatalf("%s: the appended signature does not check", alg)
			}
			if cap(dst) == 8192 && &out[0] != &dst[:1][0] {
				t.Fatalf("%s: a buffer with room was not used", alg)
			}
			if alg == Ed25519 {
				want, _ := s.Sign(context.Background(), alg, msg)
				if string(sig) != string(want) {
					t.Fatal("Ed25519: AppendSign and Sign differ")
				}
			}
		}
	}
	if _, err := s.AppendSign(context.Background(), "ES256", nil, msg); err == nil {
		t.Fatal("signed with a method the set does not hold")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, alg := range KeySetAlgs {
		if _, err := s.AppendSign(ctx, alg, nil, msg); err == nil {
			t.Fatalf("%s: signed with a cancelled context", alg)
		}
		if _, err := s.Sign(ctx, alg, msg); err == nil {
			t.Fatalf("%s: Sign signed with a cancelled context", alg)
		}
	}
}

// elsewhere is a signer that says nothing of where it signs, as a remote
// one (Vault Transit) does.
type elsewhere struct{ Signer }

// TestSignsInProcess: only a signer that says so signs in this process; a
// nil key set, or a signer that says nothing, does not.
func TestSignsInProcess(t *testing.T) {
	ed, ml := NewSeeds()
	local, err := NewLocalSigner(ed, ml)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    Signer
		want bool
	}{
		{"a key set held here", local, true},
		{"a nil key set", (*LocalSigner)(nil), false},
		{"a signer that says nothing", elsewhere{local}, false},
	} {
		if got := SignsInProcess(c.s); got != c.want {
			t.Errorf("%s: SignsInProcess %v, want %v", c.name, got, c.want)
		}
	}
}
