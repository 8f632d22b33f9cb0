// Package ledger defines how events are chained, how chain heads and
// checkpoints are signed, and how a chain is verified. It is pure: storage
// feeds it events and it answers whether they are intact.
package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// Genesis is the prev_hash of the first event of every workspace.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// TimeLayout is how event times enter the hash. Storage keeps microseconds,
// so hashing more precision would make a stored event unverifiable.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Truncate brings t to the precision the ledger stores and hashes.
func Truncate(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Hash returns the event hash: the SHA-256 of the RFC 8785 canonical JSON of
//
//	{"actor","case","payload_sha256","prev_hash","seq","time","type","workspace"}
//
// The payload enters by its own SHA-256 so that verification never has to
// re-parse payloads; any change to the payload bytes still changes the hash.
func Hash(e *signoff.Event) string {
	var buf [512]byte
	b := AppendHeader(buf[:0], e)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// AppendHeader appends the canonical header of e. Keys are written in the
// sorted order RFC 8785 requires; a test checks the bytes against the
// general canonicalizer.
func AppendHeader(b []byte, e *signoff.Event) []byte {
	ps := sha256.Sum256(e.Payload)
	var hx [64]byte
	hex.Encode(hx[:], ps[:])
	b = append(b, `{"actor":`...)
	b = canonical.AppendString(b, e.ActorID)
	b = append(b, `,"case":`...)
	b = canonical.AppendString(b, e.CaseID)
	b = append(b, `,"payload_sha256":"`...)
	b = append(b, hx[:]...)
	b = append(b, `","prev_hash":`...)
	b = canonical.AppendString(b, e.PrevHash)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = e.Time.UTC().AppendFormat(b, TimeLayout)
	b = append(b, `","type":`...)
	b = canonical.AppendString(b, e.Type)
	b = append(b, `,"workspace":`...)
	b = canonical.AppendString(b, e.WorkspaceID)
	return append(b, '}')
}

// Seal links e after prev: it sets Seq, PrevHash, the truncated Time and Hash.
// The payload must already be canonical JSON.
func Seal(e *signoff.Event, prevSeq int64, prevHash string) {
	e.Seq = prevSeq + 1
	e.PrevHash = prevHash
	e.Time = Truncate(e.Time)
	e.Hash = Hash(e)
}
