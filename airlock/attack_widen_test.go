package airlock

// Third attacker round, on a key written as another key's value
// ("api_key: password: X") and '&key:' ending a value only where it opens
// it. It found leaks (a chain of six keys, ':=' after the inner key, an
// Authorization value), over-redaction and a quadratic "pwd:/" run in a
// first widening design, since replaced: the inner key judges its own
// value, and the outer one only when the inner refused it as too short.
// The rows' notes say what each guarded against.

import (
	"strings"
	"testing"
	"time"
)

const awSecret = "Xk9mQ2vL7pqR8sT4wZ"

func TestAttackWidenLeak(t *testing.T) {
	rows := []struct{ in, note string }{
		// held
		{"api_key: password: " + awSecret, "held: the widened case"},
		{"pwd: password: " + awSecret, "held"},
		{"api_key: пароль: " + awSecret, "held"},
		{"api_key: password:&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;" + awSecret, "held"},
		{"password: &password: " + awSecret, "held (ec4eec1 leaked)"},
		{"password: hunter2&token:" + awSecret, "held"},
		{"pwd: /x&token:" + awSecret, "held"},
		{"password: secret: token: api_key: pwd: " + awSecret, "held: 5 keys"},
		{"secret: secret: secret: secret: secret: secret: secret: " + awSecret, "held: 7 keys"},
		// holes: a chain of exactly 6 keys (outer + 4 widenings + the initial
		// value) ends the span on the 6th key's separator and off skips it.
		{"secret: secret: secret: secret: secret: secret: " + awSecret, "NEW: ec4eec1 redacted it"},
		{"token: token: token: token: token: token: " + awSecret, "NEW: ec4eec1 redacted it"},
		{"secret: token: token: token: token: token: " + awSecret, "NEW: ec4eec1 redacted it"},
		{"Password: Passwd: Secret: Token: Api_Key: Pwd: " + awSecret, "NEW: ec4eec1 redacted it"},
		{"api_key: api_key: api_key: api_key: api_key: pwd: " + awSecret, "NEW: ec4eec1 redacted it"},
		{"password: password: password: password: password: password: " + awSecret, "old too"},
		{strings.Repeat("secret: ", 12) + awSecret, "12 keys"},
		// holes: the widening reads the inner value with kvValue, not with
		// the inner key's rule: an Authorization scheme word is taken as
		// the whole value and the credential after it survives.
		{"api_key: authorization: Basic dXNlcjpwYXNzd29yZA==", "old too (old kept 'Basic' as a hint)"},
		// holes: ':=' and '=>' inside the value stop the widening.
		{"api_key: password:= " + awSecret, "old too"},
		{"api_key: password=> " + awSecret, "old too"},
	}
	for _, r := range rows {
		out, _ := Redact(r.in)
		secret := awSecret
		if strings.Contains(r.in, "Basic ") {
			secret = "dXNlcjpwYXNzd29yZA=="
		}
		if strings.Contains(out, secret) {
			t.Errorf("leak (%s):\n in  %q\n out %q", r.note, r.in, out)
		}
	}
}

// The widened value is remembered whole ("password: X"), so the bare
// secret elsewhere in the report is not propagated, unlike "password: X".
func TestAttackWidenPropagation(t *testing.T) {
	in := "api_key: password: " + awSecret + "\nthen I logged in with " + awSecret
	out, _ := Redact(in)
	if strings.Contains(out, awSecret) {
		t.Errorf("second occurrence not propagated (ec4eec1 leaked both; plain 'password: X' propagates):\n in  %q\n out %q", in, out)
	}
}

// The widened span is judged by the outer key's rule only: the inner key's
// refusals (notASecret, min length, rulePath, 'pass' needing '=') no longer
// apply, so ordinary text is eaten, and propagated everywhere.
func TestAttackWidenOverRedaction(t *testing.T) {
	rows := []struct{ in, want, note string }{
		{"password: required: true", "password: [password] true", "same as ec4eec1"},
		{"token: expires: 3600", "token: expires: 3600", "held"},
		{"secret: name: db", "secret: name: db", "held"},
		{"password=; user=bob", "password=; user=bob", "held"},
		{"TestSecret: pass: 12, fail: 0\nsummary pass: 12 total", "TestSecret: pass: 12, fail: 0\nsummary pass: 12 total", "NEW: 'pass:' (an '='-only key) widens; 'pass: 12' eaten and propagated"},
		{"Secret: token: none", "Secret: token: none", "NEW: 'none' is notASecret for token"},
		{"error: secret: token: expired", "error: secret: token: expired", "NEW: 'expired' < token min 16"},
		{"secret: pwd: /home/ci", "secret: pwd: /home/ci", "NEW: pwd refuses paths"},
		{"api_key: token: expires_in: 3600", "api_key: token: expires_in: 3600", "NEW: ec4eec1 kept it"},
	}
	for _, r := range rows {
		out, _ := Redact(r.in)
		if out != r.want {
			t.Errorf("over-redaction (%s):\n in   %q\n out  %q\n want %q", r.note, r.in, out, r.want)
		}
	}
}

func TestAttackWidenPanic(t *testing.T) {
	ins := []string{
		"api_key: password:", "api_key: password:&nbsp;", "password: &", "password: &password:",
		"api_key: password: ", "api_key: password:\t", "api_key: password:&", "api_key: password:&n",
		"api_key: password:&nbsp", "api_key: password:%", "api_key: password:%2", "api_key: password:%20",
		"api_key: password: \"", "api_key: password: \\\"", "api_key: password: '", "api_key: 密码:",
		"api_key: пароль:", "api_key: password: \xe5\xaf", "api_key: password:\xe5", "api_key: \xe5password:",
		"password: token:&#", "password: token:&amp", "password=password=", "password: secret: token: api_key: pwd:",
		"token:&token:", "x&password:", "&password:", "password:&password:&", ":", "=", "password:=", "api_key: password:=",
		"api_key: password: &", "api_key: password: &token:", "api_key: password:&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;",
	}
	for _, in := range ins {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panic on %q: %v", in, r)
				}
			}()
			out, _ := Redact(in)
			if o2, _ := Redact(out); o2 != out {
				t.Errorf("not a fixed point: %q -> %q -> %q", in, out, o2)
			}
		}()
	}
}

func TestAttackWidenLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	rows := []struct {
		pat    string
		lo, hi int
		note   string
	}{
		{"password: ", 64 << 10, 512 << 10, ""},
		{"a: password: ", 64 << 10, 512 << 10, ""},
		{"password:&nbsp;", 64 << 10, 512 << 10, ""},
		{"api_key: password:&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;", 64 << 10, 512 << 10, ""},
		{"token: ", 64 << 10, 512 << 10, ""},
		{"pwd: /pwd: ", 64 << 10, 512 << 10, ""},
		{"pwd: /password: ", 64 << 10, 512 << 10, ""},
		{"&password: ", 64 << 10, 512 << 10, ""},
		{"password: &", 64 << 10, 512 << 10, ""},
		{"secret: pass: ", 64 << 10, 512 << 10, ""},
		{"token: x&token:", 64 << 10, 512 << 10, ""},
		// Pre-existing at ec4eec1, not from the widening: an unquoted run with
		// no value stop, rejected by rulePath at every separator, is read to
		// its end from each one (512 KB: 55-63 s at HEAD).
		{"pwd:/", 16 << 10, 128 << 10, "pre-existing"},
		{"pwd=/", 16 << 10, 128 << 10, "pre-existing"},
	}
	for _, r := range rows {
		var ds [2]time.Duration
		for i, n := range []int{r.lo, r.hi} {
			s := strings.Repeat(r.pat, n/len(r.pat))
			best := time.Hour
			for k := 0; k < 3; k++ {
				t0 := time.Now()
				Redact(s)
				if d := time.Since(t0); d < best {
					best = d
				}
			}
			ds[i] = best
		}
		ratio := float64(ds[1]) / float64(ds[0]+time.Millisecond)
		t.Logf("%-50q %v %v ratio %.1f", r.pat, ds[0], ds[1], ratio)
		// A ratio alone is scheduler noise at a few ms; the quadratic
		// cases took seconds.
		if ratio > 20 && ds[1] > 200*time.Millisecond {
			t.Errorf("superlinear %s: %q %v -> %v (ratio %.1f, linear ~8)", r.note, r.pat, ds[0], ds[1], ratio)
		}
	}
}
