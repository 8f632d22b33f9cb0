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

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/ledger"
)

const ws = "ws_01jdemo0000000000000000000"

func chain(n int) []signoff.Event {
	evs := make([]signoff.Event, n)
	prevSeq, prev := int64(0), ledger.Genesis
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 123456789, time.UTC)
	for i := range evs {
		evs[i] = signoff.Event{WorkspaceID: ws, CaseID: "case_1", Type: "case.transitioned", ActorID: "act_1",
			Time: t0.Add(time.Duration(i) * time.Second), Payload: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		ledger.Seal(&evs[i], prevSeq, prev)
		prevSeq, prev = evs[i].Seq, evs[i].Hash
	}
	return evs
}

// The hand-built header must be exactly what the general RFC 8785
// canonicalizer produces for the same fields.
func TestHeaderIsCanonical(t *testing.T) {
	t.Parallel()
	for _, e := range []signoff.Event{
		chain(1)[0],
		{WorkspaceID: ws, Seq: 42, CaseID: "", Type: "ünïcode \"quoted\" \\ <tag> \u2028", ActorID: "a\nb", Time: time.Unix(0, 0), Payload: []byte(`{}`), PrevHash: ledger.Genesis},
	} {
		ps := sha256.Sum256(e.Payload)
		want, err := canonical.Marshal(map[string]any{
			"actor": e.ActorID, "case": e.CaseID, "payload_sha256": hex.EncodeToString(ps[:]), "prev_hash": e.PrevHash,
			"seq": e.Seq, "time": e.Time.UTC().Format(ledger.TimeLayout), "type": e.Type, "workspace": e.WorkspaceID,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := ledger.AppendHeader(nil, &e); string(got) != string(want) {
			t.Fatalf("header\n got %s\nwant %s", got, want)
		}
	}
}

func TestSealTruncatesToMicroseconds(t *testing.T) {
	t.Parallel()
	e := chain(1)[0]
	if e.Time.Nanosecond()%1000 != 0 {
		t.Fatalf("time %v not truncated to µs", e.Time)
	}
	if e.Seq != 1 || e.PrevHash != ledger.Genesis || len(e.Hash) != 64 {
		t.Fatalf("sealed = %+v", e)
	}
}

func signedHead(key ed25519.PrivateKey, evs []signoff.Event) ledger.Checkpoint {
	last := evs[len(evs)-1]
	h := ledger.Checkpoint{WorkspaceID: ws, Seq: last.Seq, Hash: last.Hash, Head: true}
	h.Sign(key, last.Time)
	return h
}

func TestVerifier(t *testing.T) {
	t.Parallel()
	_, key, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	tests := []struct {
		name     string
		unsorted bool // events arrive out of sequence order: storage sorts, so only one pass applies
		edit     func(evs []signoff.Event) []signoff.Event
		head     func(evs []signoff.Event) ledger.Checkpoint
		wantSeq  int64 // 0 = no failure
		reason   string
	}{
		{name: "intact"},
		{name: "payload edited", edit: func(e []signoff.Event) []signoff.Event { e[4].Payload = []byte(`{"n":99}`); return e }, wantSeq: 5, reason: "edited"},
		{name: "type edited", edit: func(e []signoff.Event) []signoff.Event { e[2].Type = "x"; return e }, wantSeq: 3, reason: "edited"},
		{name: "time edited", edit: func(e []signoff.Event) []signoff.Event { e[6].Time = e[6].Time.Add(time.Microsecond); return e }, wantSeq: 7, reason: "edited"},
		{name: "event removed", edit: func(e []signoff.Event) []signoff.Event { return append(e[:3], e[4:]...) }, wantSeq: 4, reason: "missing"},
		{name: "last event removed", edit: func(e []signoff.Event) []signoff.Event { return e[:len(e)-1] }, wantSeq: 10, reason: "missing"},
		{name: "two events swapped", unsorted: true, edit: func(e []signoff.Event) []signoff.Event {
			e[2], e[3] = e[3], e[2]
			return e
		}, wantSeq: 3, reason: "missing"},
		{name: "swapped and renumbered", edit: func(e []signoff.Event) []signoff.Event {
			e[2], e[3] = e[3], e[2]
			e[2].Seq, e[3].Seq = 3, 4
			return e
		}, wantSeq: 3, reason: "prev_hash"},
		{name: "event repeated", edit: func(e []signoff.Event) []signoff.Event {
			return append(e[:5], append([]signoff.Event{e[4]}, e[5:]...)...)
		}, wantSeq: 5, reason: "repeats"},
		{name: "rehashed without the key", edit: func(e []signoff.Event) []signoff.Event {
			e[1].Payload = []byte(`{"forged":true}`)
			for i := 1; i < len(e); i++ {
				e[i].PrevHash = e[i-1].Hash
				e[i].Hash = ledger.Hash(&e[i])
			}
			return e
		}, head: func(e []signoff.Event) ledger.Checkpoint { return signedHead(other, e) }, wantSeq: 10, reason: "unknown key"},
		{name: "rehashed, head left", edit: func(e []signoff.Event) []signoff.Event {
			e[1].Payload = []byte(`{"forged":true}`)
			for i := 1; i < len(e); i++ {
				e[i].PrevHash = e[i-1].Hash
				e[i].Hash = ledger.Hash(&e[i])
			}
			return e
		}, head: func([]signoff.Event) ledger.Checkpoint { return signedHead(key, chain(10)) }, wantSeq: 10, reason: "signed head"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs := chain(10)
			head := signedHead(key, evs)
			if tt.edit != nil {
				evs = tt.edit(evs)
			}
			if tt.head != nil {
				head = tt.head(evs)
			}
			// One pass, and every way of cutting the chain into parallel
			// segments, must reach the same verdict.
			allCuts := [][]int64{nil, {5}, {4, 8}, {2, 3, 4, 5, 6, 7, 8, 9, 10}, {10}, {11}}
			if tt.unsorted {
				allCuts = allCuts[:1]
			}
			for _, cuts := range allCuts {
				v := verifySegments(ws, trusted, evs, cuts)
				res, err := v.Finish(head, nil)
				var f *ledger.Failure
				switch {
				case tt.wantSeq == 0 && err != nil:
					t.Fatalf("cuts %v: Finish = %v, want success", cuts, err)
				case tt.wantSeq == 0:
					if res.Events != 10 || !res.SignaturesOK {
						t.Fatalf("cuts %v: result = %+v", cuts, res)
					}
				case !errors.As(err, &f) || f.Seq != tt.wantSeq || !strings.Contains(f.Reason, tt.reason):
					t.Fatalf("cuts %v: Finish = %v, want failure at %d mentioning %q", cuts, err, tt.wantSeq, tt.reason)
				}
			}
		})
	}
}

// verifySegments feeds evs to one verifier per segment, as storage does:
// segment k covers sequences from cuts[k-1] up to cuts[k]-1, the first open
// below and the last open above, and each stops at its first failure.
func verifySegments(ws string, trusted map[string]ed25519.PublicKey, evs []signoff.Event, cuts []int64) *ledger.Verifier {
	if len(cuts) == 0 {
		v := ledger.NewVerifier(ws, trusted)
		for i := range evs {
			if v.Add(&evs[i]) != nil {
				break
			}
		}
		return v
	}
	starts := append([]int64{1}, cuts...)
	segs := make([]*ledger.Verifier, len(starts))
	for k, from := range starts {
		segs[k] = ledger.NewSegment(ws, from)
		for i := range evs {
			e := &evs[i]
			if (k > 0 && e.Seq < from) || (k < len(starts)-1 && e.Seq >= starts[k+1]) {
				continue
			}
			if segs[k].Add(e) != nil {
				break
			}
		}
	}
	return ledger.Join(ws, trusted, segs)
}

func TestCheckpoints(t *testing.T) {
	t.Parallel()
	_, key, _ := ed25519.GenerateKey(nil)
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	evs := chain(2*ledger.CheckpointInterval + 5)
	cps := []ledger.Checkpoint{}
	for _, s := range []int64{ledger.CheckpointInterval, 2 * ledger.CheckpointInterval} {
		cp := ledger.Checkpoint{WorkspaceID: ws, Seq: s, Hash: evs[s-1].Hash}
		cp.Sign(key, evs[s-1].Time)
		cps = append(cps, cp)
	}
	run := func(cps []ledger.Checkpoint) error {
		v := ledger.NewVerifier(ws, trusted)
		for i := range evs {
			v.Add(&evs[i])
		}
		_, err := v.Finish(signedHead(key, evs), cps)
		return err
	}
	if err := run(cps); err != nil {
		t.Fatalf("intact: %v", err)
	}
	var f *ledger.Failure
	if err := run(cps[:1]); !errors.As(err, &f) || f.Seq != 2*ledger.CheckpointInterval {
		t.Fatalf("missing checkpoint: %v", err)
	}
	bad := append([]ledger.Checkpoint{}, cps...)
	bad[0].Signature = append([]byte{}, bad[0].Signature...)
	bad[0].Signature[0] ^= 1
	if err := run(bad); !errors.As(err, &f) || f.Seq != ledger.CheckpointInterval || !strings.Contains(f.Reason, "signature") {
		t.Fatalf("bad signature: %v", err)
	}
	moved := append([]ledger.Checkpoint{}, cps...)
	moved[1].Seq = 7
	if err := run(moved); !errors.As(err, &f) || f.Seq != 7 {
		t.Fatalf("checkpoint off position: %v", err)
	}
}

// TestWipeAndTruncate: emptying the chain, or cutting it back to a
// checkpoint and presenting that checkpoint as the head, must not verify.
func TestWipeAndTruncate(t *testing.T) {
	t.Parallel()
	_, key, _ := ed25519.GenerateKey(nil)
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	var f *ledger.Failure
	if _, err := ledger.NewVerifier(ws, trusted).Finish(ledger.Checkpoint{WorkspaceID: ws, Hash: ledger.Genesis}, nil); !errors.As(err, &f) || f.Seq != 1 {
		t.Fatalf("wiped chain: %v, want failure at 1", err)
	}
	evs := chain(ledger.CheckpointInterval + 3)
	cp := ledger.Checkpoint{WorkspaceID: ws, Seq: ledger.CheckpointInterval, Hash: evs[ledger.CheckpointInterval-1].Hash}
	cp.Sign(key, evs[ledger.CheckpointInterval-1].Time)
	v := ledger.NewVerifier(ws, trusted)
	for i := range evs[:ledger.CheckpointInterval] {
		v.Add(&evs[i])
	}
	if _, err := v.Finish(cp, []ledger.Checkpoint{cp}); !errors.As(err, &f) || !strings.Contains(f.Reason, "signature") {
		t.Fatalf("checkpoint presented as head: %v, want a signature failure", err)
	}
}

func BenchmarkHash(b *testing.B) {
	e := chain(1)[0]
	e.Payload = []byte(`{"command":"escalate","from":"triaging","note":"` + strings.Repeat("n", 120) + `","to":"needs_human","version":7}`)
	b.ReportAllocs()
	for b.Loop() {
		ledger.Hash(&e)
	}
}
