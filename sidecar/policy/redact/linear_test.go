package redact

import (
	"strings"
	"testing"
	"time"
)

// hostileTexts are texts built to make a detector read the same bytes over
// and over: many separators after long names, many 40-character runs,
// certificates by the hundred, nested escapes, runs of random-looking
// parts, names of two words without values.
var hostileTexts = map[string]func(n int) string{
	"separators":      func(n int) string { return strings.Repeat("a", n/2) + strings.Repeat(":", n/2) },
	"pairs":           func(n int) string { return strings.Repeat("password=a:b ", n/13) },
	"aws-shaped runs": func(n int) string { return strings.Repeat(fakeAWSRandom+" ", n/41) },
	"certificates": func(n int) string {
		return strings.Repeat("-----BEGIN CERTIFICATE-----\n"+fakeRandom64+"\n-----END CERTIFICATE-----\n", n/120)
	},
	"escapes":      func(n int) string { return strings.Repeat("%25%41", n/6) },
	"random parts": func(n int) string { return strings.Repeat(fakeRandom32+"/", n/33) },
	"base64":       func(n int) string { return strings.Repeat(b64("password=hunter2 "), n/24) },
	"two words":    func(n int) string { return strings.Repeat("new password ", n/13) },
	"quotes":       func(n int) string { return "token: \"" + strings.Repeat(`\"`, n/2) },
}

// Redacting grows with the text, not with its square: 16 times the text
// takes well under 60 times as long (a square would be 256).
func TestRedactionIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("times megabytes of text")
	}
	r := newTest(t, Options{})
	for name, make := range hostileTexts {
		t.Run(name, func(t *testing.T) {
			small, big := make(64<<10), make(1<<20)
			t0 := time.Now()
			r.Text(small)
			t1 := time.Now()
			r.Text(big)
			t2 := time.Now()
			ds, db := t1.Sub(t0), t2.Sub(t1)
			if db > 60*ds+100*time.Millisecond {
				t.Fatalf("%d bytes in %v, %d bytes in %v", len(small), ds, len(big), db)
			}
			t.Logf("%d bytes in %v, %d bytes in %v", len(small), ds, len(big), db)
		})
	}
}
