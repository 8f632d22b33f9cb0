package signoff

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// ID prefixes name what an id refers to, so a case id can never be mistaken
// for a project id in logs or URLs.
const (
	PrefixWorkspace = "ws"
	PrefixProject   = "prj"
	PrefixActor     = "act"
	PrefixToken     = "tok"
	PrefixCase      = "case"
	PrefixReport    = "rpt"
	PrefixTracking  = "trk"
	PrefixTask      = "task"
	PrefixCall      = "call"
	PrefixMessage   = "msg"
	PrefixDecision  = "dec"
)

// idAlphabet is Crockford's base32 in lower case: no i, l, o, u.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

const idBodyLen = 26 // 128 bits in base32

// NewID returns prefix_ followed by 26 base32 characters: 48 bits of
// millisecond time and 80 random bits. Ids made by one process are strictly
// increasing (within a millisecond the random part counts up), so ordering by
// id is creation order and a page cursor stays stable.
func NewID(prefix string) string {
	idMu.Lock()
	defer idMu.Unlock()
	ms := uint64(time.Now().UnixMilli())
	if ms <= idLastMs && !incr(idLast[6:]) {
		ms = idLastMs // same millisecond (or the clock stepped back): count up
	} else {
		if ms <= idLastMs {
			ms = idLastMs + 1 // counter overflowed: borrow the next millisecond
		}
		if _, err := rand.Read(idLast[6:]); err != nil {
			panic("signoff: crypto/rand failed: " + err.Error())
		}
	}
	idLastMs = ms
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], ms<<16)
	copy(b[6:], idLast[6:])
	return prefix + "_" + encodeBase32(b)
}

var (
	idMu     sync.Mutex
	idLastMs uint64
	idLast   [16]byte
)

// incr adds one to a big-endian number and reports whether it overflowed.
func incr(b []byte) (overflow bool) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return false
		}
	}
	return true
}

func encodeBase32(b [16]byte) string {
	// 128 bits -> 26 symbols of 5 bits, the first symbol carrying 3 bits.
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [idBodyLen]byte
	for i := idBodyLen - 1; i >= 0; i-- {
		out[i] = idAlphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidID reports whether s is a well-formed id with the given prefix. It is
// strict so that ids can be used in paths and logs without escaping.
func ValidID(prefix, s string) bool {
	body, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(body) != idBodyLen {
		return false
	}
	if body[0] > '7' { // the first symbol holds only 3 bits
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(idAlphabet, body[i]) < 0 {
			return false
		}
	}
	return true
}

// CheckID returns an EINVALID error naming what when s is not a valid id.
func CheckID(what, prefix, s string) error {
	if !ValidID(prefix, s) {
		return Errorf(EINVALID, "invalid %s id", what)
	}
	return nil
}
