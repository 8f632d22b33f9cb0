package approval_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
)

var (
	now    = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	policy = approval.Policy{Quorum: 1, TTLHours: 23, NoSelfApproval: true, ProposerCannotApprove: true}
	subj   = strings.Repeat("a", 64)
)

func expect() approval.Expect {
	return approval.Expect{Case: "case_1", SubjectDigest: subj, Policy: policy, Approver: "act_op", CaseOpener: "act_opener", Proposer: "act_fixer", Now: now}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	good := func() approval.Statement {
		return approval.NewStatement("case_1", subj, approval.Approve, policy.Digest(), "act_op", now, policy.TTL())
	}
	tests := []struct {
		name string
		mod  func(*approval.Statement, *approval.Expect)
		code string
	}{
		{"valid", func(*approval.Statement, *approval.Expect) {}, ""},
		{"reject is a decision too", func(s *approval.Statement, _ *approval.Expect) { s.Decision = approval.Reject }, ""},
		{"another case", func(s *approval.Statement, _ *approval.Expect) { s.Case = "case_2" }, signoff.EINVALID},
		{"unknown decision", func(s *approval.Statement, _ *approval.Expect) { s.Decision = "maybe" }, signoff.EINVALID},
		{"another subject", func(s *approval.Statement, _ *approval.Expect) { s.SubjectDigest = strings.Repeat("b", 64) }, signoff.ECONFLICT},
		{"another policy", func(s *approval.Statement, _ *approval.Expect) { s.PolicyDigest = strings.Repeat("c", 64) }, signoff.ECONFLICT},
		{"signed for someone else", func(s *approval.Statement, _ *approval.Expect) { s.Approver = "act_other" }, signoff.EFORBIDDEN},
		{"expired", func(_ *approval.Statement, e *approval.Expect) { e.Now = now.Add(24 * time.Hour) }, signoff.ECONFLICT},
		{"expires exactly now", func(s *approval.Statement, e *approval.Expect) { e.Now = s.ExpiresAt }, signoff.ECONFLICT},
		{"lifetime over the policy", func(s *approval.Statement, _ *approval.Expect) { s.ExpiresAt = s.IssuedAt.Add(48 * time.Hour) }, signoff.EINVALID},
		{"issued in the future", func(s *approval.Statement, _ *approval.Expect) {
			s.IssuedAt, s.ExpiresAt = now.Add(time.Hour), now.Add(2*time.Hour)
		}, signoff.EINVALID},
		{"expires before issued", func(s *approval.Statement, _ *approval.Expect) { s.ExpiresAt = s.IssuedAt }, signoff.EINVALID},
		{"bad nonce", func(s *approval.Statement, _ *approval.Expect) { s.Nonce = "xyz" }, signoff.EINVALID},
		{"bad digest", func(s *approval.Statement, _ *approval.Expect) { s.SubjectDigest = "ABC" }, signoff.EINVALID},
		{"self-approval", func(s *approval.Statement, e *approval.Expect) { e.CaseOpener = "act_op" }, signoff.EFORBIDDEN},
		{"the proposer", func(s *approval.Statement, e *approval.Expect) { e.Proposer = "act_op" }, signoff.EFORBIDDEN},
		{"proposer allowed by policy", func(s *approval.Statement, e *approval.Expect) {
			p := policy
			p.ProposerCannotApprove = false
			e.Policy, e.Proposer, s.PolicyDigest = p, "act_op", p.Digest()
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, e := good(), expect()
			tt.mod(&st, &e)
			err := approval.Check(st, e)
			if got := signoff.ErrorCode(err); (err == nil) != (tt.code == "") || (err != nil && got != tt.code) {
				t.Fatalf("Check = %v (code %q), want code %q", err, got, tt.code)
			}
		})
	}
}

func TestSignOpenVerify(t *testing.T) {
	t.Parallel()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)
	st := approval.NewStatement("case_1", subj, approval.Approve, policy.Digest(), "act_op", now, policy.TTL())
	env, err := approval.Sign(st, key)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(env)
	env2, st2, err := approval.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	if st2 != st {
		t.Fatalf("round trip: %+v != %+v", st2, st)
	}
	if err := approval.Verify(env2, st2, pub); err != nil {
		t.Fatal(err)
	}
	if err := approval.Verify(env2, st2, otherPub); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("another key: %v", err)
	}
	// Any change to the statement breaks the signature.
	st2.SubjectDigest = strings.Repeat("b", 64)
	if err := approval.Verify(env2, st2, pub); err == nil {
		t.Fatal("a changed statement verified")
	}
	// Other payload types and non-canonical payloads are refused.
	for _, bad := range []string{
		strings.Replace(string(raw), "vnd.signoff.approval", "vnd.other", 1),
		`{"payloadType":"application/vnd.signoff.approval+json","payload":"e30=","signatures":[]}`,
		`not json`,
	} {
		if _, _, err := approval.Open([]byte(bad)); err == nil {
			t.Errorf("Open(%.60s) accepted", bad)
		}
	}
}

func TestQuorum(t *testing.T) {
	t.Parallel()
	p2 := approval.Policy{Quorum: 2, TTLHours: 23}
	a := func(id, who, subject string, pol approval.Policy, status string, exp time.Time) signoff.Approval {
		return signoff.Approval{ID: id, ApproverID: who, SubjectDigest: subject, PolicyDigest: pol.Digest(), Decision: approval.Approve, Status: status, ExpiresAt: exp}
	}
	later := now.Add(time.Hour)
	tests := []struct {
		name string
		list []signoff.Approval
		ok   bool
		n    int
	}{
		{"two distinct", []signoff.Approval{a("1", "x", subj, p2, "valid", later), a("2", "y", subj, p2, "valid", later)}, true, 2},
		{"same approver twice", []signoff.Approval{a("1", "x", subj, p2, "valid", later), a("2", "x", subj, p2, "valid", later)}, false, 1},
		{"one expired", []signoff.Approval{a("1", "x", subj, p2, "valid", later), a("2", "y", subj, p2, "valid", now)}, false, 1},
		{"one consumed", []signoff.Approval{a("1", "x", subj, p2, "valid", later), a("2", "y", subj, p2, "consumed", later)}, false, 1},
		{"one for another subject", []signoff.Approval{a("1", "x", subj, p2, "valid", later), a("2", "y", strings.Repeat("b", 64), p2, "valid", later)}, false, 1},
		{"one under another policy", []signoff.Approval{a("1", "x", subj, p2, "valid", later), a("2", "y", subj, policy, "valid", later)}, false, 1},
	}
	for _, tt := range tests {
		ids, ok := approval.Quorum(tt.list, subj, p2, now)
		if ok != tt.ok || len(ids) != tt.n {
			t.Errorf("%s: Quorum = %v %v, want %d ids, ok %v", tt.name, ids, ok, tt.n, tt.ok)
		}
	}
}

func FuzzOpen(f *testing.F) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	env, _ := approval.Sign(approval.NewStatement("case_1", subj, approval.Approve, policy.Digest(), "act_op", now, time.Hour), key)
	raw, _ := json.Marshal(env)
	f.Add(raw)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, st, err := approval.Open(b)
		if err != nil {
			return
		}
		_ = approval.Check(st, expect())
		_ = approval.Verify(env, st, key.Public().(ed25519.PublicKey))
	})
}

// BenchmarkApprovalCheck is the server's work on one approval envelope:
// strict decode, canonical check, Ed25519 verification and the rules.
func BenchmarkApprovalCheck(b *testing.B) {
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	st := approval.NewStatement("case_1", subj, approval.Approve, policy.Digest(), "act_op", now, policy.TTL())
	env, _ := approval.Sign(st, key)
	raw, _ := json.Marshal(env)
	e := expect()
	b.ReportAllocs()
	for b.Loop() {
		env, st, err := approval.Open(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := approval.Verify(env, st, pub); err != nil {
			b.Fatal(err)
		}
		if err := approval.Check(st, e); err != nil {
			b.Fatal(err)
		}
	}
}
