package ledger

import (
	"crypto/ed25519"
	"fmt"

	"github.com/signoff-dev/signoff"
)

// Failure names the first sequence at which a chain stops being trustworthy.
type Failure struct {
	WorkspaceID string
	Seq         int64
	Reason      string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("workspace %s: ledger broken at seq %d: %s", f.WorkspaceID, f.Seq, f.Reason)
}

// Verifier checks one workspace's chain as events stream past in sequence
// order, keeping only what the checkpoints will need.
type Verifier struct {
	ws      string
	trusted map[string]ed25519.PublicKey
	seq     int64
	hash    string
	marks   map[int64]string // hashes at checkpoint positions
	fail    *Failure
	// A segment starting mid-chain accepts its first link on trust (open)
	// and remembers it (entry, of event entrySeq) for Join to check; first
	// is the sequence of the first event that verified.
	open     bool
	entry    string
	entrySeq int64
	first    int64
}

// NewVerifier starts a verification of workspace ws. With no trusted keys
// the signatures are not checked and Result says so.
func NewVerifier(ws string, trusted map[string]ed25519.PublicKey) *Verifier {
	return &Verifier{ws: ws, trusted: trusted, hash: Genesis, marks: map[int64]string{}}
}

// NewSegment starts a verifier for the part of a chain that begins at
// sequence from. It takes the first event's prev_hash on trust and Join
// checks that link against the previous segment, so a long chain can be
// verified in parallel pieces.
func NewSegment(ws string, from int64) *Verifier {
	v := &Verifier{ws: ws, seq: from - 1, hash: Genesis, marks: map[int64]string{}}
	if from > 1 {
		v.hash, v.open = "", true
	}
	return v
}

// Join chains segments verified in order of their starting sequence into
// one verifier ready for Finish. It reports the earliest failure, whether
// inside a segment or where two meet, with the reason a single pass over
// the whole chain would give.
func Join(ws string, trusted map[string]ed25519.PublicKey, segs []*Verifier) *Verifier {
	out := NewVerifier(ws, trusted)
	keep := func(f *Failure) {
		if f != nil && (out.fail == nil || f.Seq < out.fail.Seq) {
			out.fail = f
		}
	}
	for _, s := range segs {
		if s.entrySeq > 0 {
			// Where two segments meet: the events the earlier one did not
			// reach are missing, else the link must hold.
			switch {
			case s.entrySeq > out.seq+1:
				keep(&Failure{WorkspaceID: ws, Seq: out.seq + 1, Reason: fmt.Sprintf("event missing (next stored is %d)", s.entrySeq)})
			case s.entry != out.hash:
				keep(&Failure{WorkspaceID: ws, Seq: s.entrySeq, Reason: fmt.Sprintf("prev_hash does not match the hash of event %d (inserted, removed or reordered)", out.seq)})
			}
		}
		keep(s.fail)
		for k, h := range s.marks {
			out.marks[k] = h
		}
		if s.first > 0 && s.seq > out.seq {
			out.seq, out.hash = s.seq, s.hash
		}
	}
	return out
}

func (v *Verifier) failf(seq int64, format string, args ...any) *Failure {
	if v.fail == nil {
		v.fail = &Failure{WorkspaceID: v.ws, Seq: seq, Reason: fmt.Sprintf(format, args...)}
	}
	return v.fail
}

// Add checks the next event. Events must arrive ordered by sequence; a gap,
// a repeat, a broken link or a wrong hash fails at that sequence.
func (v *Verifier) Add(e *signoff.Event) error {
	if v.fail != nil {
		return v.fail
	}
	want := v.seq + 1
	switch {
	case e.WorkspaceID != v.ws:
		return v.failf(want, "event of workspace %q in this chain", e.WorkspaceID)
	case e.Seq > want:
		return v.failf(want, "event missing (next stored is %d)", e.Seq)
	case e.Seq < want:
		return v.failf(e.Seq, "sequence repeats or goes backwards after %d", v.seq)
	case v.open:
		v.open, v.entry, v.entrySeq = false, e.PrevHash, e.Seq
	case e.PrevHash != v.hash:
		return v.failf(e.Seq, "prev_hash does not match the hash of event %d (inserted, removed or reordered)", v.seq)
	}
	if h := Hash(e); h != e.Hash {
		return v.failf(e.Seq, "hash mismatch: content was edited")
	}
	v.seq, v.hash = e.Seq, e.Hash
	if v.first == 0 {
		v.first = e.Seq
	}
	if e.Seq%CheckpointInterval == 0 {
		v.marks[e.Seq] = e.Hash
	}
	return nil
}

// Result is what a verification found.
type Result struct {
	WorkspaceID  string `json:"workspace_id"`
	Events       int64  `json:"events"`
	HeadSeq      int64  `json:"head_seq"`
	HeadHash     string `json:"head_hash"`
	Checkpoints  int    `json:"checkpoints"`
	SignaturesOK bool   `json:"signatures_checked"`
}

// Finish checks the signed head and the checkpoints against the chain that
// was streamed. A chain rewritten by someone without the signing key has
// consistent hashes but cannot match the signatures.
func (v *Verifier) Finish(head Checkpoint, checkpoints []Checkpoint) (Result, error) {
	res := Result{WorkspaceID: v.ws, Events: v.seq, HeadSeq: v.seq, HeadHash: v.hash, Checkpoints: len(checkpoints), SignaturesOK: len(v.trusted) > 0}
	if v.fail != nil {
		return res, v.fail
	}
	// Every workspace's chain starts with its own creation, so an empty
	// chain is a wiped one, not a new one.
	if head.Seq < 1 || v.seq < 1 {
		return res, v.failf(1, "chain is empty: events removed (every workspace starts with workspace.created)")
	}
	head.Head = true
	if head.Seq != v.seq || head.Hash != v.hash {
		if head.Seq > v.seq {
			return res, v.failf(v.seq+1, "event missing: the signed head is at %d", head.Seq)
		}
		return res, v.failf(v.seq, "chain does not end at the signed head (head seq %d)", head.Seq)
	}
	seen := make(map[int64]bool, len(checkpoints))
	for i := range checkpoints {
		cp := &checkpoints[i]
		want, ok := v.marks[cp.Seq]
		switch {
		case cp.WorkspaceID != v.ws || !ok:
			return res, v.failf(cp.Seq, "checkpoint at a position the chain does not have")
		case cp.Hash != want:
			return res, v.failf(cp.Seq, "chain differs from the signed checkpoint (history rewritten at or before this sequence)")
		}
		if res.SignaturesOK {
			if err := cp.Verify(v.trusted); err != nil {
				return res, v.failf(cp.Seq, "checkpoint %v", err)
			}
		}
		seen[cp.Seq] = true
	}
	for s := int64(CheckpointInterval); s <= v.seq; s += CheckpointInterval {
		if !seen[s] {
			return res, v.failf(s, "signed checkpoint missing")
		}
	}
	if res.SignaturesOK {
		if err := head.Verify(v.trusted); err != nil {
			return res, v.failf(v.seq, "head %v", err)
		}
	}
	return res, nil
}
