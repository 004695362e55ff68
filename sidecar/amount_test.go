package sidecar

import (
	"errors"
	"regexp"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

func TestReadAmount(t *testing.T) {
	ptr := &settings.Amount{Unit: "GBP", Kind: settings.AmountPointer, Pointer: "/total"}
	cnt := &settings.Amount{Unit: "messages", Kind: settings.AmountCount, Pointer: "/to"}
	fixed := &settings.Amount{Unit: "calls", Kind: settings.AmountFixed, Value: 1}
	cases := []struct {
		name string
		rule *settings.Amount
		args string
		want int64
		code string
	}{
		{"no rule", nil, `{"total":5}`, -1, ""},
		{"fixed", fixed, `{"anything":[1,2]}`, 1, ""},
		{"fixed ignores folded names", fixed, `{"a":1,"A":2}`, 1, ""},
		{"pointer", ptr, `{"total":45,"item":"paper"}`, 45, ""},
		{"pointer whole number written 45.0", ptr, `{"total":45.0}`, 45, ""},
		{"pointer largest", ptr, `{"total":9007199254740991}`, 9007199254740991, ""},
		{"pointer fraction", ptr, `{"total":4.5}`, 0, CodeAmountUnreadable},
		{"pointer negative", ptr, `{"total":-1}`, 0, CodeAmountUnreadable},
		{"pointer text", ptr, `{"total":"45"}`, 0, CodeAmountUnreadable},
		{"pointer missing", ptr, `{"item":"paper"}`, 0, CodeAmountUnreadable},
		{"no arguments", ptr, ``, 0, CodeAmountUnreadable},
		{"folded duplicate", ptr, `{"total":5,"TOTAL":500}`, 0, CodeDuplicateMember},
		{"folded duplicate deep", ptr, `{"total":5,"x":{"Ab":1,"aB":2}}`, 0, CodeDuplicateMember},
		{"count", cnt, `{"to":["a","b","c"]}`, 3, ""},
		{"count empty", cnt, `{"to":[]}`, 0, ""},
		{"count not a list", cnt, `{"to":"a"}`, 0, CodeAmountUnreadable},
		{"escaped pointer", &settings.Amount{Unit: "u", Kind: settings.AmountPointer, Pointer: "/a~1b/c~0d"}, `{"a/b":{"c~d":7}}`, 7, ""},
		{"array index", &settings.Amount{Unit: "u", Kind: settings.AmountPointer, Pointer: "/items/1/n"}, `{"items":[{"n":1},{"n":2}]}`, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []byte
			if c.args != "" {
				args = []byte(c.args)
			}
			a, err := readAmount(c.rule, args)
			if c.code != "" {
				var ae *amountError
				if !errors.As(err, &ae) || ae.code != c.code {
					t.Fatalf("err %v, want code %s", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want < 0 {
				if a != nil {
					t.Fatalf("amount %+v for no rule", a)
				}
				return
			}
			if a == nil || a.Value != c.want || a.Unit != c.rule.Unit {
				t.Fatalf("amount %+v, want %d", a, c.want)
			}
		})
	}
}

// FuzzReadAmount: any arguments give an amount within 0 … 2^53−1 or a
// refusal with one of the two codes, and the refusal's words never hold
// the arguments.
func FuzzReadAmount(f *testing.F) {
	for _, s := range []string{`{"total":45}`, `{"total":"x"}`, `{"total":1e3}`, `{"Total":1,"total":2}`, `[]`, `{"total":[1,2]}`, `nul`, `{"total":9007199254740993}`} {
		f.Add(s, "/total", false)
		f.Add(s, "/total", true)
	}
	f.Fuzz(func(t *testing.T, args, ptr string, count bool) {
		rule := &settings.Amount{Unit: "u", Kind: settings.AmountPointer, Pointer: ptr}
		if count {
			rule.Kind = settings.AmountCount
		}
		a, err := readAmount(rule, []byte(args))
		if err != nil {
			var ae *amountError
			if !errors.As(err, &ae) || (ae.code != CodeAmountUnreadable && ae.code != CodeDuplicateMember) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if a == nil || a.Value < 0 || a.Value > maxSafeInt || a.Unit != "u" {
			t.Fatalf("amount %+v", a)
		}
	})
}

const maxSafeInt = 1<<53 - 1

func TestCallIDsUniqueAndUnguessable(t *testing.T) {
	var ids callIDs
	seen := map[string]bool{}
	form := regexp.MustCompile(`^provared-[0-9]+-[A-Za-z0-9_-]{16}$`)
	for i := 0; i < 1000; i++ {
		id := ids.next()
		if seen[id] || !form.MatchString(id) {
			t.Fatalf("id %q (seen %v)", id, seen[id])
		}
		seen[id] = true
	}
}
