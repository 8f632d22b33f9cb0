package web

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ratelimit"
)

// limitKey names one bucket of one limiter.
type limitKey struct {
	l   *ratelimit.Limiter
	key string
}

// admit spends a token from every bucket named, answering 429 with
// Retry-After when one is empty.
func admit(w http.ResponseWriter, keys ...limitKey) error {
	for _, k := range keys {
		if wait := k.l.Take(k.key, time.Now()); wait > 0 {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			return signoff.Errorf(signoff.ERATELIMIT, "Too many requests from here just now. Please wait %d seconds and try again.", secs)
		}
	}
	return nil
}
