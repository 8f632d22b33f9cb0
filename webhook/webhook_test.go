package webhook_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/webhook"
)

// The known-answer vector. The inputs are the example message of the
// Standard Webhooks reference libraries; the expected signature was
// computed independently of this package, once, with OpenSSL 3.0:
//
//	printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
//	  openssl dgst -sha256 -mac HMAC -binary \
//	    -macopt hexkey:$(printf '%s' MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p -c 100) |
//	  base64
//
// which prints g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=. The same value
// is the expected signature of TestWebhookSign in the reference Go library
// (github.com/standard-webhooks/standard-webhooks, libraries/go/webhook_test.go).
const (
	kaSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // a 24-byte key
	kaID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	kaTimestamp = 1614265330
	kaBody      = `{"test": 2432232314}`
	kaSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestKnownAnswer(t *testing.T) {
	key, err := webhook.ParseSecret(kaSecret)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(kaTimestamp, 0)
	if got := webhook.Sign(key, kaID, ts, []byte(kaBody)); got != kaSignature {
		t.Errorf("Sign = %s, want %s", got, kaSignature)
	}
	h := http.Header{}
	h.Set("webhook-id", kaID)
	h.Set("webhook-timestamp", strconv.Itoa(kaTimestamp))
	h.Set("webhook-signature", kaSignature)
	id, got, err := webhook.Verify(key, h, []byte(kaBody), ts.Add(time.Minute), 0)
	if err != nil || id != kaID || !got.Equal(ts) {
		t.Errorf("Verify = %q, %v, %v; want %q, %v", id, got, err, kaID, ts)
	}
	// Headers makes exactly the three headers, with the same signature.
	hs := webhook.Headers(key, kaID, ts, []byte(kaBody))
	if len(hs) != 3 || hs.Get("Webhook-Id") != kaID || hs.Get("Webhook-Timestamp") != "1614265330" ||
		hs.Get("Webhook-Signature") != kaSignature {
		t.Errorf("Headers = %v", hs)
	}
}

func TestSecrets(t *testing.T) {
	s := webhook.NewSecret()
	if !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("NewSecret = %q, want the whsec_ prefix", s)
	}
	key, err := webhook.ParseSecret(s)
	if err != nil || len(key) != 32 {
		t.Fatalf("ParseSecret(NewSecret()) = %d bytes, %v; want 32", len(key), err)
	}
	if s2 := webhook.NewSecret(); s2 == s {
		t.Error("two NewSecret calls gave the same secret")
	}
	// The prefix is optional.
	bare, err := webhook.ParseSecret(strings.TrimPrefix(s, "whsec_"))
	if err != nil || !bytes.Equal(bare, key) {
		t.Errorf("ParseSecret without prefix = %x, %v; want %x", bare, err, key)
	}

	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	for _, tc := range []struct {
		name, secret string
		ok           bool
	}{
		{"24 bytes", "whsec_" + b64(24), true},
		{"64 bytes", "whsec_" + b64(64), true},
		{"23 bytes", "whsec_" + b64(23), false},
		{"empty", "", false},
		{"prefix only", "whsec_", false},
		{"not base64", "whsec_!!!!not-base64!!!!not-base64!!!!", false},
		{"url-safe base64", "whsec_" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 30)), false},
	} {
		_, err := webhook.ParseSecret(tc.secret)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok {
			if !errors.Is(err, webhook.ErrSecret) {
				t.Errorf("%s: %v, want ErrSecret", tc.name, err)
			} else if len(tc.secret) > len("whsec_") && strings.Contains(err.Error(), tc.secret[len("whsec_"):]) {
				t.Errorf("%s: the error repeats the secret: %v", tc.name, err)
			}
		}
	}
}

func TestVerify(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 32)
	other := bytes.Repeat([]byte("o"), 32)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"proposal.created","id":42}`)
	const id = "msg_2xYz"

	signed := func(ts time.Time) http.Header { return webhook.Headers(key, id, ts, body) }
	with := func(h http.Header, name, value string) http.Header {
		h.Set(name, value)
		return h
	}
	without := func(h http.Header, name string) http.Header {
		h.Del(name)
		return h
	}
	good := webhook.Sign(key, id, now, body)
	wrong := webhook.Sign(other, id, now, body)
	v1 := strings.TrimPrefix(good, "v1,")
	// The same 32 bytes in non-canonical base64: the last character before
	// "=" carries two unused bits, and the lowest one is flipped here.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	last := strings.IndexByte(alphabet, good[len(good)-2])
	nonCanonical := good[:len(good)-2] + string(alphabet[last^1]) + "="
	if a, b := mustLenient(t, v1), mustLenient(t, nonCanonical[3:]); !bytes.Equal(a, b) {
		t.Fatalf("%s and %s decode differently", good, nonCanonical)
	}

	for _, tc := range []struct {
		name      string
		h         http.Header
		body      []byte
		tolerance time.Duration
		want      error // nil: valid
	}{
		{name: "good signature", h: signed(now)},
		{name: "any of several signatures", h: with(signed(now), "webhook-signature", wrong+" v1,AAAA "+good+" "+wrong)},
		{name: "signatures in repeated headers", h: func() http.Header {
			h := with(signed(now), "webhook-signature", wrong)
			h.Add("webhook-signature", good)
			return h
		}()},
		{name: "extra spaces", h: with(signed(now), "webhook-signature", "  "+wrong+"   "+good+"  ")},
		{name: "wrong secret", h: with(signed(now), "webhook-signature", wrong), want: webhook.ErrSignature},
		{name: "tampered body", h: signed(now), body: []byte(`{"type":"proposal.created","id":43}`), want: webhook.ErrSignature},
		{name: "empty body", h: signed(now), body: []byte{}, want: webhook.ErrSignature},
		{name: "tampered id", h: with(signed(now), "webhook-id", "msg_2xYZ"), want: webhook.ErrSignature},
		{name: "tampered timestamp", h: with(signed(now), "webhook-timestamp", strconv.FormatInt(now.Unix()+1, 10)), want: webhook.ErrSignature},
		{name: "timestamp with a leading zero", h: with(signed(now), "webhook-timestamp", "0"+strconv.FormatInt(now.Unix(), 10)), want: webhook.ErrSignature},
		{name: "v2 entries ignored", h: with(signed(now), "webhook-signature", "v2,"+v1+" v1a,"+v1+" V1,"+v1), want: webhook.ErrSignature},
		{name: "v2 entries next to a good v1", h: with(signed(now), "webhook-signature", "v2,"+v1+" "+good)},
		{name: "v1 entry without a comma", h: with(signed(now), "webhook-signature", "v1"+v1), want: webhook.ErrSignature},
		{name: "non-canonical base64", h: with(signed(now), "webhook-signature", nonCanonical), want: webhook.ErrSignature},
		{name: "truncated signature", h: with(signed(now), "webhook-signature", good[:len(good)-4]), want: webhook.ErrSignature},
		{name: "garbage signature header", h: with(signed(now), "webhook-signature", "garbage,,, \x01 v1,%%%"), want: webhook.ErrSignature},
		{name: "blank signature header", h: with(signed(now), "webhook-signature", "   "), want: webhook.ErrMissingHeaders},
		{name: "old timestamp", h: signed(now.Add(-6 * time.Minute)), want: webhook.ErrTimestamp},
		{name: "future timestamp", h: signed(now.Add(6 * time.Minute)), want: webhook.ErrTimestamp},
		{name: "old by exactly the tolerance", h: signed(now.Add(-5 * time.Minute))},
		{name: "future by exactly the tolerance", h: signed(now.Add(5 * time.Minute))},
		{name: "old by one second more than the tolerance", h: signed(now.Add(-5*time.Minute - time.Second)), want: webhook.ErrTimestamp},
		{name: "custom tolerance accepts", h: signed(now.Add(-time.Hour)), tolerance: 2 * time.Hour},
		{name: "custom tolerance refuses", h: signed(now.Add(-time.Minute)), tolerance: 30 * time.Second, want: webhook.ErrTimestamp},
		{name: "timestamp of 1970", h: signed(time.Unix(0, 0)), want: webhook.ErrTimestamp},
		{name: "stale and forged", h: with(signed(now.Add(-time.Hour)), "webhook-signature", wrong), want: webhook.ErrSignature},
		{name: "missing id", h: without(signed(now), "webhook-id"), want: webhook.ErrMissingHeaders},
		{name: "missing timestamp", h: without(signed(now), "webhook-timestamp"), want: webhook.ErrMissingHeaders},
		{name: "missing signature", h: without(signed(now), "webhook-signature"), want: webhook.ErrMissingHeaders},
		{name: "no headers", h: http.Header{}, want: webhook.ErrMissingHeaders},
		{name: "repeated id", h: func() http.Header { h := signed(now); h.Add("webhook-id", "msg_other"); return h }(), want: webhook.ErrMissingHeaders},
		{name: "id with a space", h: with(signed(now), "webhook-id", "msg 1"), want: webhook.ErrMissingHeaders},
		{name: "id with a control byte", h: with(signed(now), "webhook-id", "msg\x7f"), want: webhook.ErrMissingHeaders},
		{name: "id with non-ASCII", h: with(signed(now), "webhook-id", "msg_é"), want: webhook.ErrMissingHeaders},
		{name: "id too long", h: webhook.Headers(key, strings.Repeat("a", 201), now, body), want: webhook.ErrMissingHeaders},
		{name: "id of 200 bytes", h: webhook.Headers(key, strings.Repeat("a", 200), now, body)},
		{name: "garbage timestamp", h: with(signed(now), "webhook-timestamp", "yesterday"), want: webhook.ErrTimestamp},
		{name: "negative timestamp", h: with(signed(now), "webhook-timestamp", "-1"), want: webhook.ErrTimestamp},
		{name: "signed timestamp", h: with(signed(now), "webhook-timestamp", "+"+strconv.FormatInt(now.Unix(), 10)), want: webhook.ErrTimestamp},
		{name: "fractional timestamp", h: with(signed(now), "webhook-timestamp", strconv.FormatInt(now.Unix(), 10)+".5"), want: webhook.ErrTimestamp},
		{name: "huge timestamp", h: with(signed(now), "webhook-timestamp", strings.Repeat("9", 30)), want: webhook.ErrTimestamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := body
			if tc.body != nil {
				b = tc.body
			}
			gotID, gotTS, err := webhook.Verify(key, tc.h, b, now, tc.tolerance)
			if tc.want == nil {
				wantTS, _ := strconv.ParseInt(tc.h.Get("webhook-timestamp"), 10, 64)
				if err != nil || gotID != tc.h.Get("webhook-id") || gotTS.Unix() != wantTS {
					t.Errorf("Verify = %q, %v, %v; want %q at %d", gotID, gotTS, err, tc.h.Get("webhook-id"), wantTS)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error %v, want %v", err, tc.want)
			}
			for _, e := range []error{webhook.ErrSecret, webhook.ErrMissingHeaders, webhook.ErrTimestamp, webhook.ErrSignature} {
				if e != tc.want && errors.Is(err, e) {
					t.Errorf("error %v is also %v", err, e)
				}
			}
			if gotID != "" || !gotTS.IsZero() {
				t.Errorf("Verify returned %q, %v with an error", gotID, gotTS)
			}
		})
	}
}

// mustLenient decodes s as base64 the lenient way (unused bits ignored).
func mustLenient(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyRefusesShortKeys(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, key := range [][]byte{nil, {}, bytes.Repeat([]byte("k"), 23)} {
		// Signed with the very same short key: still refused.
		_, _, err := webhook.Verify(key, webhook.Headers(key, "m1", now, nil), nil, now, 0)
		if !errors.Is(err, webhook.ErrSecret) {
			t.Errorf("Verify with a %d-byte key: %v, want ErrSecret", len(key), err)
		}
	}
}

func TestStaleTimestampMessage(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 32)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	_, _, err := webhook.Verify(key, webhook.Headers(key, "m1", now.Add(-time.Hour), nil), nil, now, 0)
	if !errors.Is(err, webhook.ErrTimestamp) || !strings.Contains(err.Error(), "stale timestamp") {
		t.Errorf("old message: %v, want a stale timestamp error", err)
	}
	_, _, err = webhook.Verify(key, webhook.Headers(key, "m1", now.Add(time.Hour), nil), nil, now, 0)
	if !errors.Is(err, webhook.ErrTimestamp) || !strings.Contains(err.Error(), "future") {
		t.Errorf("future message: %v, want a timestamp in the future error", err)
	}
}

// FuzzVerify checks that Verify never panics, that it accepts only what
// it could have signed, and that a message Headers signs always verifies.
func FuzzVerify(f *testing.F) {
	f.Add(kaID, "1614265330", kaSignature, []byte(kaBody), int64(kaTimestamp))
	f.Add("", "", "", []byte(nil), int64(0))
	f.Add("msg 1", "-1", "v1, v2,xx v1,====", []byte("x"), int64(-1))
	f.Add("msg", "99999999999999999999999", "v1,"+strings.Repeat("A", 100), []byte{0xff}, int64(1<<62))
	key, err := webhook.ParseSecret(kaSecret)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte, nowUnix int64) {
		now := time.Unix(nowUnix, 0)
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		gotID, gotTS, err := webhook.Verify(key, h, body, now, 0)
		if err == nil {
			// Accepted: the values are the headers' and the signature is
			// the one Sign makes for them.
			secs, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || gotID != id || gotTS.Unix() != secs {
				t.Fatalf("accepted id %q ts %q as %q, %v", id, ts, gotID, gotTS)
			}
			if ts == strconv.FormatInt(secs, 10) && !strings.Contains(sig, webhook.Sign(key, id, gotTS, body)) {
				t.Fatalf("accepted %q, which lacks %s", sig, webhook.Sign(key, id, gotTS, body))
			}
		}
		// A well-formed message Headers signs always verifies.
		wellFormed := id != "" && len(id) <= webhook.MaxIDLength &&
			strings.IndexFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
		if wellFormed && nowUnix >= 0 && nowUnix < 1e17 {
			if _, _, err := webhook.Verify(key, webhook.Headers(key, id, now, body), body, now, 0); err != nil {
				t.Fatalf("own signature of %q refused: %v", id, err)
			}
		}
	})
}

// BenchmarkVerify is one webhook's authentication: header parsing, the
// HMAC and the time window.
func BenchmarkVerify(b *testing.B) {
	secret, err := webhook.ParseSecret(webhook.NewSecret())
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"type":"deployment","data":{"commit":"0123456789abcdef0123456789abcdef01234567","environment":"production"}}`)
	now := time.Now()
	h := webhook.Headers(secret, "msg_1", now, body)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := webhook.Verify(secret, h, body, now, 0); err != nil {
			b.Fatal(err)
		}
	}
}
