package ledger

import (
	"crypto/ed25519"
	"fmt"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/keys"
)

// CheckpointInterval is how often (in events) a signed checkpoint is kept
// for good. The head is signed on every append; checkpoints make a rewrite
// of older history detectable without verifying a signature per event.
const CheckpointInterval = 1024

// Checkpoint is the server's signed statement that the chain of a workspace
// had hash Hash at sequence Seq. The head of each chain is the same kind of
// statement, overwritten on every append, but signed under its own type so
// that a permanent checkpoint can never be passed off as the head (which
// would let a truncation back to that checkpoint verify).
type Checkpoint struct {
	WorkspaceID string    `json:"workspace_id"`
	Seq         int64     `json:"seq"`
	Hash        string    `json:"hash"`
	KeyID       string    `json:"key_id"`
	SignedAt    time.Time `json:"signed_at"`
	Signature   []byte    `json:"signature"`
	// Head marks the statement "this is where the chain ends".
	Head bool `json:"head,omitempty"`
}

// statement is the exact byte string that is signed: RFC 8785 canonical JSON
// with a type tag, so a checkpoint signature cannot be replayed as any other
// kind of signed statement.
func (c *Checkpoint) statement() []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"hash":`...)
	b = canonical.AppendString(b, c.Hash)
	b = append(b, `,"key_id":`...)
	b = canonical.AppendString(b, c.KeyID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, c.Seq, 10)
	b = append(b, `,"signed_at":"`...)
	b = c.SignedAt.UTC().AppendFormat(b, TimeLayout)
	if c.Head {
		b = append(b, `","type":"signoff.ledger.head/v1","workspace":`...)
	} else {
		b = append(b, `","type":"signoff.ledger.checkpoint/v1","workspace":`...)
	}
	b = canonical.AppendString(b, c.WorkspaceID)
	return append(b, '}')
}

// Sign fills KeyID, SignedAt (truncated) and Signature.
func (c *Checkpoint) Sign(key ed25519.PrivateKey, now time.Time) {
	c.KeyID = keys.ID(key.Public().(ed25519.PublicKey))
	c.SignedAt = Truncate(now)
	c.Signature = ed25519.Sign(key, c.statement())
}

// Verify checks the signature against the trusted keys, matched by key id.
func (c *Checkpoint) Verify(trusted map[string]ed25519.PublicKey) error {
	pub, ok := trusted[c.KeyID]
	if !ok {
		return fmt.Errorf("signed by unknown key %q", c.KeyID)
	}
	if !ed25519.Verify(pub, c.statement(), c.Signature) {
		return fmt.Errorf("signature does not verify")
	}
	return nil
}

// Trust builds the key-id map Verify takes.
func Trust(pubs ...ed25519.PublicKey) map[string]ed25519.PublicKey {
	m := make(map[string]ed25519.PublicKey, len(pubs))
	for _, p := range pubs {
		m[keys.ID(p)] = p
	}
	return m
}
