// Package webhook signs and verifies webhooks in the Standard Webhooks
// format (https://www.standardwebhooks.com/), symmetric (HMAC-SHA256)
// signatures only. It is pure logic: no I/O besides reading random bytes
// for a new secret.
//
// A message carries three headers:
//
//	webhook-id         the message id, unique per message (1..200 visible ASCII characters here)
//	webhook-timestamp  when it was sent, in unix seconds
//	webhook-signature  space-separated "v1,<base64 HMAC-SHA256>" entries
//
// The signed content is id + "." + timestamp + "." + body, with the
// timestamp exactly as it appears in the header. A secret is "whsec_"
// followed by the standard base64 of the key bytes.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every secret NewSecret makes.
const SecretPrefix = "whsec_"

// MinSecretBytes is the shortest key ParseSecret accepts (the spec asks for
// 24 to 64 bytes; longer keys are accepted too).
const MinSecretBytes = 24

// DefaultTolerance is how far a timestamp may be from now, either way, when
// Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// MaxIDLength is the longest webhook-id Verify accepts.
const MaxIDLength = 200

// Errors returned (wrapped) by ParseSecret and Verify. An HTTP receiver
// answers 401 for ErrSignature and 400 for the others.
var (
	// ErrSecret: the secret is not base64 or its key is too short (from
	// ParseSecret, or from Verify given a short key).
	ErrSecret = errors.New("webhook: invalid secret")
	// ErrMissingHeaders: webhook-id, webhook-timestamp or
	// webhook-signature is missing, repeated, or (webhook-id) malformed.
	ErrMissingHeaders = errors.New("webhook: missing or malformed webhook headers")
	// ErrTimestamp: webhook-timestamp is not a number of seconds, or it is
	// further than the tolerance from now (stale or in the future).
	ErrTimestamp = errors.New("webhook: bad timestamp")
	// ErrSignature: no v1 signature in webhook-signature matches.
	ErrSignature = errors.New("webhook: no matching signature")
)

// NewSecret returns a new secret: SecretPrefix and the base64 of 32 random
// bytes.
func NewSecret() string {
	key := make([]byte, 32)
	// crypto/rand.Read never returns an error: it crashes the program
	// irrecoverably if the system's random source fails.
	rand.Read(key)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// ParseSecret returns the key of a secret, given with or without
// SecretPrefix. Surrounding spaces are ignored. It refuses a secret that is
// not standard base64 or whose key is shorter than MinSecretBytes; the
// error never repeats the secret.
func ParseSecret(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64", ErrSecret)
	}
	if len(key) < MinSecretBytes {
		return nil, fmt.Errorf("%w: key is %d bytes, at least %d needed", ErrSecret, len(key), MinSecretBytes)
	}
	return key, nil
}

// Sign returns the webhook-signature value for a message: one v1 entry.
func Sign(secret []byte, id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(secret, id, strconv.FormatInt(ts.Unix(), 10), body))
}

// Headers returns the three headers of a signed message.
func Headers(secret []byte, id string, ts time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, Sign(secret, id, ts, body))
	return h
}

func mac(secret []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a received message and returns its id and timestamp.
// tolerance bounds how far the timestamp may be from now in either
// direction (a difference of exactly tolerance passes); zero or negative
// means DefaultTolerance.
//
// A secret shorter than MinSecretBytes (a nil one, say) is refused with
// ErrSecret before anything else: that is a configuration error, not the
// sender's. Then the checks run in this order: headers present
// (ErrMissingHeaders), timestamp a number (ErrTimestamp), signature
// (ErrSignature), timestamp within tolerance (ErrTimestamp, "stale
// timestamp" or "timestamp in the future"). So a message is called stale
// only once its signature is known to be genuine: a replay or a skewed
// clock, not a forgery. Signatures are compared in constant time; entries
// of versions other than v1, and v1 entries that are not canonical
// standard base64, are ignored. On error the id and time are zero.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) (string, time.Time, error) {
	if len(secret) < MinSecretBytes {
		// Most likely no secret configured: everyone could sign with it.
		return "", time.Time{}, fmt.Errorf("%w: key is %d bytes, at least %d needed", ErrSecret, len(secret), MinSecretBytes)
	}
	id, err := single(h, HeaderID)
	if err != nil {
		return "", time.Time{}, err
	}
	if err := checkID(id); err != nil {
		return "", time.Time{}, err
	}
	tsText, err := single(h, HeaderTimestamp)
	if err != nil {
		return "", time.Time{}, err
	}
	sigs := strings.Fields(strings.Join(h.Values(HeaderSignature), " "))
	if len(sigs) == 0 {
		return "", time.Time{}, fmt.Errorf("%w: no %s", ErrMissingHeaders, HeaderSignature)
	}
	secs, err := parseTimestamp(tsText)
	if err != nil {
		return "", time.Time{}, err
	}

	want := mac(secret, id, tsText, body)
	matched := false
	for _, entry := range sigs {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			matched = true
		}
	}
	if !matched {
		return "", time.Time{}, ErrSignature
	}

	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts := time.Unix(secs, 0)
	switch {
	case now.Sub(ts) > tolerance:
		return "", time.Time{}, fmt.Errorf("%w: stale timestamp: sent at %s, %s before now, tolerance %s",
			ErrTimestamp, ts.UTC().Format(time.RFC3339), now.Sub(ts).Truncate(time.Second), tolerance)
	case ts.Sub(now) > tolerance:
		return "", time.Time{}, fmt.Errorf("%w: timestamp in the future: %s, %s after now, tolerance %s",
			ErrTimestamp, ts.UTC().Format(time.RFC3339), ts.Sub(now).Truncate(time.Second), tolerance)
	}
	return id, ts, nil
}

// single returns the one value of header name; missing, empty or repeated
// is ErrMissingHeaders (a repeated id or timestamp would be ambiguous).
func single(h http.Header, name string) (string, error) {
	vs := h.Values(name)
	switch {
	case len(vs) == 0 || (len(vs) == 1 && strings.TrimSpace(vs[0]) == ""):
		return "", fmt.Errorf("%w: no %s", ErrMissingHeaders, name)
	case len(vs) > 1:
		return "", fmt.Errorf("%w: %d %s headers", ErrMissingHeaders, len(vs), name)
	}
	return vs[0], nil
}

// checkID accepts 1..MaxIDLength visible ASCII characters (0x21-0x7e).
func checkID(id string) error {
	if len(id) > MaxIDLength {
		return fmt.Errorf("%w: %s longer than %d bytes", ErrMissingHeaders, HeaderID, MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("%w: %s has a byte outside visible ASCII at offset %d", ErrMissingHeaders, HeaderID, i)
		}
	}
	return nil
}

// parseTimestamp accepts 1 to 18 decimal digits (no sign, no spaces): up
// to year 31 billion or so, so the time arithmetic never overflows.
func parseTimestamp(s string) (int64, error) {
	if len(s) == 0 || len(s) > 18 {
		return 0, fmt.Errorf("%w: %s is not unix seconds", ErrTimestamp, HeaderTimestamp)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %s is not unix seconds", ErrTimestamp, HeaderTimestamp)
		}
	}
	return strconv.ParseInt(s, 10, 64)
}
