package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/keys"
)

// The registry is one chain for the whole database that records which
// workspace chains must exist: each entry binds a workspace id to the hash
// of the first event of its chain. Per-workspace verification can only
// judge chains that are still there; the registry is what makes a chain
// that was deleted, wiped or replaced by a fresh one visible.

// RegistryEntry is the registration of one workspace chain.
type RegistryEntry struct {
	Seq         int64     `json:"seq"`
	WorkspaceID string    `json:"workspace_id"`
	Genesis     string    `json:"genesis"` // hash of the workspace's event 1
	Time        time.Time `json:"time"`
	PrevHash    string    `json:"prev_hash"`
	Hash        string    `json:"hash"`
}

// HashRegistryEntry is the SHA-256 of the RFC 8785 canonical JSON of
// {"genesis","prev_hash","seq","time","type","workspace"}; the type tag
// keeps an entry hash from ever equalling an event hash.
func HashRegistryEntry(e *RegistryEntry) string {
	b := make([]byte, 0, 320)
	b = append(b, `{"genesis":`...)
	b = canonical.AppendString(b, e.Genesis)
	b = append(b, `,"prev_hash":`...)
	b = canonical.AppendString(b, e.PrevHash)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = e.Time.UTC().AppendFormat(b, TimeLayout)
	b = append(b, `","type":"signoff.ledger.registry/v1","workspace":`...)
	b = canonical.AppendString(b, e.WorkspaceID)
	b = append(b, '}')
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SealRegistryEntry links e after the entry (prevSeq, prevHash).
func SealRegistryEntry(e *RegistryEntry, prevSeq int64, prevHash string) {
	e.Seq, e.PrevHash, e.Time = prevSeq+1, prevHash, Truncate(e.Time)
	e.Hash = HashRegistryEntry(e)
}

// RegistryHead is the server's signed statement of where the registry
// ends. Its own type tag keeps it from being passed off as a workspace
// head or checkpoint, or they as it.
type RegistryHead struct {
	Seq       int64     `json:"seq"`
	Hash      string    `json:"hash"`
	KeyID     string    `json:"key_id"`
	SignedAt  time.Time `json:"signed_at"`
	Signature []byte    `json:"signature"`
}

// Pending reports a head no server has signed yet: the state migration
// leaves until a process with the key registers the existing chains.
func (h *RegistryHead) Pending() bool { return h.KeyID == "" }

func (h *RegistryHead) statement() []byte {
	b := make([]byte, 0, 200)
	b = append(b, `{"hash":`...)
	b = canonical.AppendString(b, h.Hash)
	b = append(b, `,"key_id":`...)
	b = canonical.AppendString(b, h.KeyID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, h.Seq, 10)
	b = append(b, `,"signed_at":"`...)
	b = h.SignedAt.UTC().AppendFormat(b, TimeLayout)
	return append(b, `","type":"signoff.ledger.registry-head/v1"}`...)
}

// Sign fills KeyID, SignedAt (truncated) and Signature.
func (h *RegistryHead) Sign(key ed25519.PrivateKey, now time.Time) {
	h.KeyID = keys.ID(key.Public().(ed25519.PublicKey))
	h.SignedAt = Truncate(now)
	h.Signature = ed25519.Sign(key, h.statement())
}

// Verify checks the signature against the trusted keys, matched by key id.
func (h *RegistryHead) Verify(trusted map[string]ed25519.PublicKey) error {
	pub, ok := trusted[h.KeyID]
	if !ok {
		return fmt.Errorf("signed by unknown key %q", h.KeyID)
	}
	if !ed25519.Verify(pub, h.statement(), h.Signature) {
		return fmt.Errorf("signature does not verify")
	}
	return nil
}

// Registered is a registry entry with what storage holds of its workspace.
type Registered struct {
	RegistryEntry
	HasWorkspace bool   // a workspaces row
	HasHead      bool   // a ledger_heads row
	Stored       string // hash of the stored event 1, "" when there is none
}

// Problem is one thing the registry check found wrong. WorkspaceID is empty
// for a problem of the registry itself.
type Problem struct {
	WorkspaceID string `json:"workspace_id,omitempty"`
	Reason      string `json:"reason"`
}

// RegistryFailure lists every problem found, so one run names every
// deleted or stray workspace rather than only the first.
type RegistryFailure struct{ Problems []Problem }

func (f *RegistryFailure) Error() string {
	parts := make([]string, len(f.Problems))
	for i, p := range f.Problems {
		if p.WorkspaceID == "" {
			parts[i] = "registry: " + p.Reason
		} else {
			parts[i] = "workspace " + p.WorkspaceID + ": " + p.Reason
		}
	}
	return "ledger registry: " + strings.Join(parts, "; ")
}

// RegistryResult is what a registry check found.
type RegistryResult struct {
	Workspaces   int64  `json:"workspaces"`
	HeadSeq      int64  `json:"head_seq"`
	HeadHash     string `json:"head_hash"`
	SignaturesOK bool   `json:"signatures_checked"`
}

// VerifyRegistry checks the registry chain against its signed head (nil when
// the head row is gone) and every registered workspace against storage.
// found maps each workspace id storage holds rows of to the tables they are
// in: any not registered is a stray. With no trusted keys the head
// signature is not checked and the result says so.
func VerifyRegistry(head *RegistryHead, entries []Registered, found map[string][]string, trusted map[string]ed25519.PublicKey) (RegistryResult, error) {
	strays := make(map[string][]string, len(found))
	for ws, tables := range found {
		strays[ws] = tables
	}
	for i := range entries {
		delete(strays, entries[i].WorkspaceID)
	}
	res := RegistryResult{SignaturesOK: len(trusted) > 0}
	var probs []Problem
	bad := func(ws, format string, args ...any) {
		probs = append(probs, Problem{WorkspaceID: ws, Reason: fmt.Sprintf(format, args...)})
	}
	seq, hash := int64(0), Genesis
	chained := true
	for i := range entries {
		e := &entries[i]
		switch {
		case !chained:
		case e.Seq != seq+1:
			bad("", "entry %d missing (next stored is %d)", seq+1, e.Seq)
			chained = false
		case e.PrevHash != hash:
			bad("", "entry %d: prev_hash does not match entry %d (inserted, removed or reordered)", e.Seq, seq)
			chained = false
		case HashRegistryEntry(&e.RegistryEntry) != e.Hash:
			bad("", "entry %d: hash mismatch: content was edited", e.Seq)
			chained = false
		default:
			seq, hash = e.Seq, e.Hash
		}
		checkRegistered(e, found[e.WorkspaceID], bad)
	}
	res.Workspaces, res.HeadSeq, res.HeadHash = int64(len(entries)), seq, hash
	switch {
	case head == nil:
		bad("", "signed registry head missing (row removed)")
	case head.Pending() && (len(entries) > 0 || len(strays) > 0):
		bad("", "no server has signed the registry yet: open this database once with the server key (signoff serve) to register its chains; if that already happened, the registry was removed")
	case head.Pending():
		// A database no server with the key has opened yet and no
		// workspace: nothing is registered and nothing should be.
	case chained && (head.Seq != seq || head.Hash != hash):
		if head.Seq > seq {
			bad("", "entry %d missing: the signed registry head is at %d (registrations removed)", seq+1, head.Seq)
		} else {
			bad("", "registry does not end at its signed head (head seq %d, last entry %d)", head.Seq, seq)
		}
	case res.SignaturesOK:
		if err := head.Verify(trusted); err != nil {
			bad("", "registry head %v", err)
		}
	}
	for ws, tables := range strays {
		bad(ws, "not in the registry: no chain was registered for this workspace, yet rows of it remain in %s (a deleted workspace's leftovers, or rows added behind the server's back)", strings.Join(tables, ", "))
	}
	if len(probs) > 0 {
		sortProblems(probs)
		return res, &RegistryFailure{Problems: probs}
	}
	return res, nil
}

func checkRegistered(e *Registered, tables []string, bad func(ws, format string, args ...any)) {
	ws := e.WorkspaceID
	switch {
	case !e.HasHead && e.Stored == "" && !e.HasWorkspace && len(tables) > 0:
		bad(ws, "registered at registry entry %d but its chain and workspace are gone (workspace deleted), while rows of it remain in %s", e.Seq, strings.Join(tables, ", "))
		return
	case !e.HasHead && e.Stored == "" && !e.HasWorkspace:
		bad(ws, "registered at registry entry %d but its chain and workspace are gone (workspace deleted)", e.Seq)
		return
	case !e.HasHead && e.Stored == "":
		bad(ws, "registered at registry entry %d but its chain is gone (events and head deleted)", e.Seq)
		return
	case e.Stored == "":
		bad(ws, "registered at registry entry %d but its chain has no first event (truncated to nothing)", e.Seq)
	case e.Stored != e.Genesis:
		bad(ws, "chain was replaced: its first event is %.12s…, registry entry %d registered %.12s…", e.Stored, e.Seq, e.Genesis)
	}
	if !e.HasHead {
		bad(ws, "registered at registry entry %d but its signed head is gone", e.Seq)
	}
	if !e.HasWorkspace {
		bad(ws, "registered at registry entry %d but its workspace row is gone", e.Seq)
	}
}

// sortProblems orders registry problems first, then by workspace, keeping
// the order they were found in otherwise, so output is stable.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int { return strings.Compare(a.WorkspaceID, b.WorkspaceID) })
}
