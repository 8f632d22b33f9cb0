package ledger_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/ledger"
)

// registry builds a signed registry of n workspaces whose chains are all
// present and start with the registered event.
func registry(key ed25519.PrivateKey, n int) (*ledger.RegistryHead, []ledger.Registered, map[string][]string) {
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	var out []ledger.Registered
	found := map[string][]string{}
	seq, hash := int64(0), ledger.Genesis
	for i := range n {
		id := fmt.Sprintf("ws_%026d", i+1)
		e := ledger.RegistryEntry{WorkspaceID: id, Genesis: fmt.Sprintf("%064x", i+1), Time: at}
		ledger.SealRegistryEntry(&e, seq, hash)
		seq, hash = e.Seq, e.Hash
		out = append(out, ledger.Registered{RegistryEntry: e, HasWorkspace: true, HasHead: true, Stored: e.Genesis})
		found[id] = []string{"workspaces", "actors", "ledger_events", "ledger_heads"}
	}
	head := &ledger.RegistryHead{Seq: seq, Hash: hash}
	head.Sign(key, at)
	return head, out, found
}

func TestVerifyRegistry(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	const second = "ws_00000000000000000000000002"
	tests := []struct {
		name   string
		edit   func(h **ledger.RegistryHead, es *[]ledger.Registered, found map[string][]string)
		wantWS string
		want   string // "" means it verifies
	}{
		{"intact", func(**ledger.RegistryHead, *[]ledger.Registered, map[string][]string) {}, "", ""},
		{"workspace deleted", func(_ **ledger.RegistryHead, es *[]ledger.Registered, found map[string][]string) {
			(*es)[1].HasWorkspace, (*es)[1].HasHead, (*es)[1].Stored = false, false, ""
			delete(found, second)
		}, second, "chain and workspace are gone (workspace deleted)"},
		{"workspace deleted, rows left", func(_ **ledger.RegistryHead, es *[]ledger.Registered, found map[string][]string) {
			(*es)[1].HasWorkspace, (*es)[1].HasHead, (*es)[1].Stored = false, false, ""
			found[second] = []string{"actors", "cases"}
		}, second, "rows of it remain in actors, cases"},
		{"chain deleted", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			(*es)[1].HasHead, (*es)[1].Stored = false, ""
		}, second, "its chain is gone"},
		{"truncated to nothing", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			(*es)[1].Stored = ""
		}, second, "no first event"},
		{"chain replaced", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			(*es)[1].Stored = strings.Repeat("e", 64)
		}, second, "chain was replaced"},
		{"head row gone", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			(*es)[1].HasHead = false
		}, second, "signed head is gone"},
		{"workspace row gone", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			(*es)[1].HasWorkspace = false
		}, second, "workspace row is gone"},
		{"stray rows", func(_ **ledger.RegistryHead, _ *[]ledger.Registered, found map[string][]string) {
			found["ws_99999999999999999999999999"] = []string{"cases"}
		}, "ws_99999999999999999999999999", "not in the registry"},
		{"last entry removed", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			*es = (*es)[:2]
		}, "", "registrations removed"},
		{"middle entry removed", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			*es = append((*es)[:1], (*es)[2:]...)
		}, "", "entry 2 missing"},
		{"entry edited", func(_ **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			(*es)[0].Genesis = strings.Repeat("e", 64)
			(*es)[0].Stored = (*es)[0].Genesis
		}, "", "content was edited"},
		{"entry beyond the head", func(h **ledger.RegistryHead, _ *[]ledger.Registered, _ map[string][]string) {
			(*h).Seq--
		}, "", "does not end at its signed head"},
		{"head signed by another key", func(h **ledger.RegistryHead, _ *[]ledger.Registered, _ map[string][]string) {
			(*h).Sign(other, (*h).SignedAt)
		}, "", "signed by unknown key"},
		{"head forged", func(h **ledger.RegistryHead, _ *[]ledger.Registered, _ map[string][]string) {
			(*h).Signature[0] ^= 1
		}, "", "signature does not verify"},
		{"head missing", func(h **ledger.RegistryHead, _ *[]ledger.Registered, _ map[string][]string) {
			*h = nil
		}, "", "head missing"},
		{"reset to unsigned", func(h **ledger.RegistryHead, es *[]ledger.Registered, _ map[string][]string) {
			*h, *es = &ledger.RegistryHead{Hash: ledger.Genesis}, nil
		}, "", "no server has signed the registry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, es, found := registry(key, 3)
			tt.edit(&head, &es, found)
			res, err := ledger.VerifyRegistry(head, es, found, trusted)
			if tt.want == "" {
				if err != nil || res.Workspaces != 3 || res.HeadSeq != 3 || !res.SignaturesOK {
					t.Fatalf("VerifyRegistry = %+v, %v; want 3 workspaces, signatures checked", res, err)
				}
				return
			}
			var f *ledger.RegistryFailure
			if !errors.As(err, &f) {
				t.Fatalf("VerifyRegistry = %v, want a failure", err)
			}
			for _, p := range f.Problems {
				if p.WorkspaceID == tt.wantWS && strings.Contains(p.Reason, tt.want) {
					return
				}
			}
			t.Fatalf("problems %+v: none for %q mentions %q", f.Problems, tt.wantWS, tt.want)
		})
	}
}

// A fresh database: unsigned head, nothing registered, nothing stored.
func TestVerifyRegistryEmpty(t *testing.T) {
	if _, err := ledger.VerifyRegistry(&ledger.RegistryHead{Hash: ledger.Genesis}, nil, map[string][]string{}, nil); err != nil {
		t.Fatalf("empty registry: %v", err)
	}
}

// The registry head's signed statement is its own type: a workspace head
// signed for the same position does not verify as a registry head.
func TestRegistryHeadIsItsOwnStatement(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	cp := ledger.Checkpoint{WorkspaceID: "", Seq: 3, Hash: strings.Repeat("a", 64), Head: true}
	cp.Sign(key, at)
	h := ledger.RegistryHead{Seq: cp.Seq, Hash: cp.Hash, KeyID: cp.KeyID, SignedAt: cp.SignedAt, Signature: cp.Signature}
	if err := h.Verify(trusted); err == nil {
		t.Fatal("a workspace head's signature verified as a registry head")
	}
	h.Sign(key, at)
	if err := h.Verify(trusted); err != nil {
		t.Fatalf("registry head: %v", err)
	}
}

// The entry hash is the SHA-256 of the canonical JSON the docs describe.
func TestRegistryEntryHashIsCanonical(t *testing.T) {
	e := ledger.RegistryEntry{WorkspaceID: "ws_\"odd\u2028", Genesis: strings.Repeat("b", 64), Time: time.Date(2026, 12, 6, 9, 0, 0, 123456000, time.UTC)}
	ledger.SealRegistryEntry(&e, 4, strings.Repeat("c", 64))
	b, err := canonical.Marshal(map[string]any{"genesis": e.Genesis, "prev_hash": e.PrevHash, "seq": e.Seq,
		"time": e.Time.Format(ledger.TimeLayout), "type": "signoff.ledger.registry/v1", "workspace": e.WorkspaceID})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Hash, sha256hex(b); got != want {
		t.Fatalf("entry hash %s, want %s of %s", got, want, b)
	}
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
