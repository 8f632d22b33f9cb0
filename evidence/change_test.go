package evidence_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/keys"
)

// changeFixture is one executed change, signed as the change desk and
// the approval CLI sign: a plan, its review under a policy, an approval
// by alice (an Ed25519 DSSE envelope over the canonical statement) and a
// receipt by the server (an in-toto statement in a DSSE envelope). Tests
// edit its fields before input() signs them, to make a bundle whose
// signatures are good but whose contents lie.
type changeFixture struct {
	server, alice, mallory ed25519.PrivateKey
	owner, aliceID, bobID  string
	policy                 []byte
	pol                    change.Policy
	plan                   change.Plan
	body                   []byte
	digest                 string
	caseID, planID         string
	apvID, rcptID          string
	apv                    approval.Statement
	// apvKey signs the approval; apvKeyID, when set, replaces the key id
	// its signature claims.
	apvKey   ed25519.PrivateKey
	apvKeyID string
	receipt  changedesk.ReceiptBody
	rcptKey  ed25519.PrivateKey
	now      time.Time
}

func changePolicy(group []string, required int) []byte {
	return fmt.Appendf(nil, `allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals:
  required: %d
  group: [%s]
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
`, required, strings.Join(group, ", "))
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func newChangeFixture(t *testing.T) *changeFixture {
	t.Helper()
	_, server := newKey(t)
	_, alice := newKey(t)
	_, mallory := newKey(t)
	fx := &changeFixture{server: server, alice: alice, mallory: mallory, apvKey: alice, rcptKey: server,
		owner: signoff.NewID(signoff.PrefixActor), aliceID: signoff.NewID(signoff.PrefixActor), bobID: signoff.NewID(signoff.PrefixActor),
		caseID: signoff.NewID(signoff.PrefixCase), planID: signoff.NewID(change.PrefixPlan),
		apvID: signoff.NewID(signoff.PrefixApproval), rcptID: signoff.NewID(signoff.PrefixReceipt),
		now: time.Now().UTC().Truncate(time.Second)}
	fx.setPolicy(t, changePolicy([]string{fx.aliceID, fx.bobID}, 1))
	fx.plan = change.Plan{Kind: change.KindFlag, Target: "flag:prod/checkout_v2", Params: json.RawMessage(`{"value":false}`),
		BeforeStateDigest: digestOf("before"), AfterStateDigest: digestOf("after"), Rollback: json.RawMessage(`{"value":true}`),
		HealthCheck: change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: "http://127.0.0.1:8080/checkout", ExpectStatus: 200, WindowSeconds: 2, IntervalSeconds: 1},
		ExpiresAt:   fx.now.Add(23 * time.Hour)}
	if err := fx.plan.Validate(); err != nil {
		t.Fatal(err)
	}
	var err error
	if fx.body, err = change.Canonical(fx.plan); err != nil {
		t.Fatal(err)
	}
	if fx.digest, err = change.PlanDigest(fx.plan); err != nil {
		t.Fatal(err)
	}
	fx.apv = approval.NewStatement(fx.caseID, fx.digest, approval.Approve, fx.pol.Digest(), fx.aliceID, fx.now.Add(-time.Minute), fx.pol.TTL())
	action, err := change.ActionDigest(fx.plan, fx.pol.Digest())
	if err != nil {
		t.Fatal(err)
	}
	fx.receipt = changedesk.ReceiptBody{Case: fx.caseID, PlanID: fx.planID, PlanDigest: fx.digest, ActionDigest: action, PolicyDigest: fx.pol.Digest(),
		Kind: fx.plan.Kind, Target: fx.plan.Target, Executor: fx.aliceID, GateChecks: change.GateChecks,
		Approvals: []changedesk.ReceiptApproval{{ID: fx.apvID, Approver: fx.aliceID, KeyID: keys.ID(alice.Public().(ed25519.PublicKey)), Via: "cli-signed", SubjectDigest: fx.digest}},
		Before:    changedesk.State{Digest: fx.plan.BeforeStateDigest, Content: digestOf("false")},
		After:     &changedesk.State{Digest: fx.plan.AfterStateDigest, Content: digestOf("false")},
		Health: changedesk.HealthReport{Passed: true, Probes: []changedesk.Probe{
			{At: fx.now, OK: true, Status: 200, Detail: "status 200"}, {At: fx.now.Add(time.Second), OK: true, Status: 200, Detail: "status 200"}}},
		Outcome: changedesk.OutcomeExecuted, StartedAt: fx.now, AppliedAt: fx.now, FinishedAt: fx.now.Add(2 * time.Second)}
	return fx
}

func (fx *changeFixture) setPolicy(t *testing.T, y []byte) {
	t.Helper()
	p, err := change.Parse(y)
	if err != nil {
		t.Fatal(err)
	}
	fx.policy, fx.pol = y, p
}

// signReceipt signs a receipt body as changedesk's Desk.sign does.
func signReceipt(t *testing.T, body changedesk.ReceiptBody, key ed25519.PrivateKey) ([]byte, string) {
	t.Helper()
	pred, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(evidence.Statement{Type: evidence.StatementType, PredicateType: changedesk.ReceiptPredicate, Predicate: pred,
		Subject: []evidence.Subject{{Name: "plan/" + body.PlanID, Digest: evidence.DigestSet{SHA256: body.PlanDigest}}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(evidence.Sign(evidence.PayloadType, payload, key))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(payload)
	return raw, hex.EncodeToString(sum[:])
}

func (fx *changeFixture) input(t *testing.T) evidence.ChangeBundleInput {
	t.Helper()
	env, err := approval.Sign(fx.apv, fx.apvKey)
	if err != nil {
		t.Fatal(err)
	}
	if fx.apvKeyID != "" {
		env.Signatures[0].KeyID = fx.apvKeyID
	}
	apvRaw, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	rcptRaw, rcptDigest := signReceipt(t, fx.receipt, fx.rcptKey)
	res := change.Review(fx.plan, change.Request{Reason: "checkout fails with 500s since the v2 flow went live", Proposer: fx.owner, Opener: fx.owner}, fx.pol, fx.now)
	if !res.OK {
		t.Fatalf("review: %+v", res.Failed())
	}
	review, _ := json.Marshal(res)
	alicePub := fx.alice.Public().(ed25519.PublicKey)
	return evidence.ChangeBundleInput{
		Case: evidence.ChangeCase{Case: fx.caseID, ProjectID: signoff.NewID(signoff.PrefixProject), State: "executed", Title: "Turn the v2 checkout off",
			Reason: "checkout fails with 500s since the v2 flow went live", Opener: fx.owner, PlanID: fx.planID, PlanDigest: fx.digest,
			Proposer: fx.owner, Via: "human", ApprovedDigest: fx.digest, ApprovedPolicyDigest: fx.pol.Digest()},
		Plan: fx.body, Review: review, Policy: fx.policy,
		Approvals: []evidence.BundleApproval{{ID: fx.apvID, Approver: fx.aliceID, KeyID: env.Signatures[0].KeyID, Decision: fx.apv.Decision,
			Status: signoff.ApprovalConsumed, Via: "cli-signed", Envelope: apvRaw}},
		Keys:     []evidence.BundleKey{{Actor: fx.aliceID, Public: alicePub}},
		Receipts: []evidence.BundleReceipt{{ID: fx.rcptID, Kind: signoff.ReceiptExecute, Digest: rcptDigest, Envelope: rcptRaw}},
	}
}

func (fx *changeFixture) write(t *testing.T, in evidence.ChangeBundleInput) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := evidence.WriteChangeBundle(dir, in, fx.server); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (fx *changeFixture) verify(t *testing.T, dir string) evidence.Findings {
	t.Helper()
	f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{fx.server.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func failed(f evidence.Findings, item, detail string) bool {
	return slices.ContainsFunc(f.With(evidence.StatusFailed), func(it evidence.Finding) bool {
		return it.Item == item && strings.Contains(it.Detail, detail)
	})
}

func TestChangeBundleVerifies(t *testing.T) {
	t.Parallel()
	fx := newChangeFixture(t)
	dir := fx.write(t, fx.input(t))
	f := fx.verify(t, dir)
	if !f.OK() || f.Kind != evidence.KindChange || f.Change == nil {
		t.Fatalf("findings (kind %s):\n%s", f.Kind, f)
	}
	c := f.Change
	if c.Case != fx.caseID || c.PlanDigest != fx.digest || c.PolicyDigest != fx.pol.Digest() || !c.ReviewOK ||
		len(c.Approvals) != 1 || !c.Approvals[0].Verified || len(c.Receipts) != 1 {
		t.Fatalf("change findings %+v", c)
	}
	if r := c.Receipts[0]; !r.Verified || r.Outcome != changedesk.OutcomeExecuted || !r.HealthPassed || r.Probes != 2 || r.ProbesOK != 2 ||
		!slices.Equal(r.Approvals, []string{fx.apvID}) {
		t.Fatalf("receipt finding %+v", r)
	}
	for _, want := range []string{"case", "plan digest", "policy digest", "review", "approval " + fx.apvID, "receipt " + fx.rcptID,
		"receipt " + fx.rcptID + " health", "case.json", "plan.json", "review.json", "policy.yaml", "statements/change.dsse.json",
		"approvals/" + fx.apvID + ".json", "receipts/" + fx.rcptID + ".json"} {
		if !slices.ContainsFunc(f.Items, func(it evidence.Finding) bool { return it.Item == want && it.Status == evidence.StatusOK }) {
			t.Errorf("no ok finding for %s:\n%s", want, f)
		}
	}
	if u := f.With(evidence.StatusUnchecked); len(u) != 1 || u[0].Item != "execution" {
		t.Errorf("unchecked = %+v", u)
	}

	// Without a trusted key it is intact but not authentic, and says so.
	f, err := evidence.VerifyBundle(dir, nil)
	if err != nil || !f.OK() || !strings.Contains(f.String(), "authenticity not established") {
		t.Fatalf("self-checked (%v):\n%s", err, f)
	}
	// Under another key, nothing the server signed verifies.
	f, _ = evidence.VerifyBundle(dir, []ed25519.PublicKey{fx.mallory.Public().(ed25519.PublicKey)})
	if f.OK() || !failed(f, "statements/change.dsse.json", "signature") {
		t.Fatalf("verified under another key:\n%s", f)
	}

	// A verification bundle is still told apart.
	_, key := newKey(t)
	f, err = evidence.VerifyBundle(writeBundle(t, key, true), nil)
	if err != nil || f.Kind != evidence.KindVerification || f.Change != nil {
		t.Fatalf("verification bundle: kind %q, %v", f.Kind, err)
	}
}

// TestChangeBundleLies signs bundles whose contents lie with the real
// keys, as a compromised or buggy server could: the checks that recompute
// and cross-check catch each one.
func TestChangeBundleLies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		lie          func(t *testing.T, fx *changeFixture)
		edit         func(in *evidence.ChangeBundleInput)
		item, detail string // item "approval" and "receipt" get the fixture's id appended
	}{
		{name: "approval signed by another key than the one it names",
			lie: func(t *testing.T, fx *changeFixture) {
				fx.apvKey, fx.apvKeyID = fx.mallory, keys.ID(fx.alice.Public().(ed25519.PublicKey))
			},
			item: "approval", detail: "signature"},
		{name: "approval under a key the bundle does not carry",
			lie:  func(t *testing.T, fx *changeFixture) { fx.apvKey = fx.mallory },
			item: "approval", detail: "does not carry"},
		{name: "approval for another digest",
			lie:  func(t *testing.T, fx *changeFixture) { fx.apv.SubjectDigest = digestOf("another plan") },
			item: "approval", detail: "approves digest"},
		{name: "approval for another case",
			lie:  func(t *testing.T, fx *changeFixture) { fx.apv.Case = signoff.NewID(signoff.PrefixCase) },
			item: "approval", detail: "for case"},
		{name: "receipt naming an approval not in the bundle",
			lie: func(t *testing.T, fx *changeFixture) {
				fx.receipt.Approvals = append(fx.receipt.Approvals, changedesk.ReceiptApproval{ID: signoff.NewID(signoff.PrefixApproval), Approver: fx.bobID, SubjectDigest: fx.digest})
			},
			item: "receipt", detail: "not in the bundle"},
		{name: "receipt signed by another key",
			lie:  func(t *testing.T, fx *changeFixture) { fx.rcptKey = fx.mallory },
			item: "receipt", detail: "signature"},
		{name: "receipt over another plan",
			lie:  func(t *testing.T, fx *changeFixture) { fx.receipt.PlanDigest = digestOf("another plan") },
			item: "receipt", detail: "executed plan"},
		{name: "receipt whose health failed but says executed",
			lie: func(t *testing.T, fx *changeFixture) {
				fx.receipt.Health.Probes[1].OK, fx.receipt.Health.Probes[1].Status = false, 500
			},
			item: "receipt", detail: "probe(s) passed"},
		{name: "receipt of a drifted target",
			lie:  func(t *testing.T, fx *changeFixture) { fx.receipt.Before.Digest = digestOf("someone else's write") },
			item: "receipt", detail: "before-state"},
		{name: "policy digest mismatch",
			lie:  func(t *testing.T, fx *changeFixture) {},
			edit: func(in *evidence.ChangeBundleInput) { in.Policy = append(in.Policy, "min_reason_length: 30\n"...) },
			item: "receipt", detail: "policy digest mismatch"},
		{name: "quorum not met under the bundle's policy",
			lie: func(t *testing.T, fx *changeFixture) {
				fx.setPolicy(t, changePolicy([]string{fx.aliceID, fx.bobID}, 2))
				fx.apv.PolicyDigest, fx.receipt.PolicyDigest = fx.pol.Digest(), fx.pol.Digest()
				fx.receipt.ActionDigest, _ = change.ActionDigest(fx.plan, fx.pol.Digest())
			},
			item: "receipt", detail: "quorum"},
		{name: "approver outside the group",
			lie: func(t *testing.T, fx *changeFixture) {
				fx.setPolicy(t, changePolicy([]string{fx.bobID}, 1))
				fx.apv.PolicyDigest, fx.receipt.PolicyDigest = fx.pol.Digest(), fx.pol.Digest()
				fx.receipt.ActionDigest, _ = change.ActionDigest(fx.plan, fx.pol.Digest())
			},
			item: "receipt", detail: "approvers group"},
		{name: "pre-approval the policy does not give",
			lie: func(t *testing.T, fx *changeFixture) {
				fx.receipt.Approvals, fx.receipt.Preapproved = nil, true
			},
			item: "receipt", detail: "pre-approval"},
		{name: "case.json names another plan digest",
			lie:  func(t *testing.T, fx *changeFixture) {},
			edit: func(in *evidence.ChangeBundleInput) { in.Case.PlanDigest = digestOf("another plan") },
			item: "plan digest", detail: "recomputed"},
		{name: "plan that is not the approved one",
			lie: func(t *testing.T, fx *changeFixture) {},
			edit: func(in *evidence.ChangeBundleInput) {
				in.Plan = []byte(strings.Replace(string(in.Plan), `"value":false`, `"value":true`, 1))
			},
			item: "plan digest", detail: "recomputed"},
		{name: "executed case without receipts",
			lie:  func(t *testing.T, fx *changeFixture) {},
			edit: func(in *evidence.ChangeBundleInput) { in.Receipts = nil },
			item: "receipts", detail: "no receipt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := newChangeFixture(t)
			tc.lie(t, fx)
			in := fx.input(t)
			if tc.edit != nil {
				tc.edit(&in)
			}
			f := fx.verify(t, fx.write(t, in))
			item := tc.item
			switch item {
			case "approval":
				item += " " + fx.apvID
			case "receipt":
				item += " " + fx.rcptID
			}
			if f.OK() || !failed(f, item, tc.detail) {
				t.Fatalf("want %s FAILED with %q; findings:\n%s", item, tc.detail, f)
			}
		})
	}
}

// TestChangeBundleTamper edits the files of a good bundle after it was
// signed.
func TestChangeBundleTamper(t *testing.T) {
	t.Parallel()
	fx := newChangeFixture(t)
	dir := fx.write(t, fx.input(t))
	pub := fx.server.Public().(ed25519.PublicKey)
	apvFile := "approvals/" + fx.apvID + ".json"
	rcptFile := "receipts/" + fx.rcptID + ".json"
	for _, tc := range []struct {
		name   string
		edit   func(t *testing.T, dir string)
		checks [][2]string // item, detail substring
	}{
		{"tampered plan", func(t *testing.T, dir string) {
			replaceIn(t, dir, "plan.json", `"value":false`, `"value":true`)
		}, [][2]string{{"plan.json", "sha256 mismatch"}, {"plan digest", "does not match"}}},
		{"tampered approval signature", func(t *testing.T, dir string) {
			var env evidence.Envelope
			b, _ := os.ReadFile(filepath.Join(dir, apvFile))
			json.Unmarshal(b, &env)
			env.Signatures[0].Sig = strings.Repeat("A", 86) + "=="
			b, _ = json.Marshal(env)
			os.WriteFile(filepath.Join(dir, apvFile), b, 0o644)
		}, [][2]string{{apvFile, "sha256 mismatch"}, {"receipt " + fx.rcptID, "not in the bundle"}}},
		{"tampered policy", func(t *testing.T, dir string) {
			replaceIn(t, dir, "policy.yaml", "required: 1", "required: 0")
		}, [][2]string{{"policy.yaml", "sha256 mismatch"}}},
		{"extra unlisted file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "receipts/rcpt_extra.json"), []byte("{}"), 0o644)
		}, [][2]string{{"receipts/rcpt_extra.json", "not covered"}, {"receipts/rcpt_extra.json", "not listed in case.json"}}},
		{"missing approval", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, apvFile))
		}, [][2]string{{apvFile, "cannot be read"}, {"approval " + fx.apvID, "missing"}, {"receipt " + fx.rcptID, "not in the bundle"}}},
		{"missing receipt", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, rcptFile))
		}, [][2]string{{rcptFile, "cannot be read"}}},
		{"missing change statement", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "statements/change.dsse.json"))
		}, [][2]string{{"statements/change.dsse.json", "no change statement"}}},
		{"a verdict added to a change bundle", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "statements/verdict.dsse.json"), []byte("{}"), 0o644)
		}, [][2]string{{"kind", "both"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copyDir := cloneBundle(t, dir)
			tc.edit(t, copyDir)
			f, err := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
			if err != nil {
				t.Fatal(err)
			}
			if f.OK() {
				t.Fatalf("tampered bundle verified:\n%s", f)
			}
			for _, c := range tc.checks {
				if !failed(f, c[0], c[1]) {
					t.Errorf("no %s failure with %q:\n%s", c[0], c[1], f)
				}
			}
		})
	}

	// One flipped bit anywhere fails, naming the file.
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(files) != 9 {
		t.Fatalf("bundle files = %v", files)
	}
	for _, name := range files {
		orig, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, pos := range []int{0, len(orig) / 3, len(orig) / 2, len(orig) - 1} {
			t.Run(fmt.Sprintf("%s@%d", name, pos), func(t *testing.T) {
				tampered := slices.Clone(orig)
				tampered[pos] ^= 0x01
				copyDir := cloneBundle(t, dir)
				os.WriteFile(filepath.Join(copyDir, name), tampered, 0o644)
				f, _ := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
				if f.OK() || !slices.ContainsFunc(f.With(evidence.StatusFailed), func(it evidence.Finding) bool { return it.Item == name }) {
					t.Fatalf("no failure names %s:\n%s", name, f)
				}
			})
		}
	}
}

func replaceIn(t *testing.T, dir, name, old, new string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q (%v)", name, old, err)
	}
	os.WriteFile(filepath.Join(dir, name), []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

func TestWriteChangeBundleRefuses(t *testing.T) {
	t.Parallel()
	fx := newChangeFixture(t)
	in := fx.input(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if err := evidence.WriteChangeBundle(dir, in, fx.server); err == nil {
		t.Error("wrote into a non-empty directory")
	}
	if err := evidence.WriteChangeBundle(filepath.Join(t.TempDir(), "b"), in, nil); err == nil {
		t.Error("wrote without a key")
	}
	bad := in
	bad.Approvals = slices.Clone(in.Approvals)
	bad.Approvals[0].ID = "../../etc/passwd"
	if err := evidence.WriteChangeBundle(filepath.Join(t.TempDir(), "b"), bad, fx.server); err == nil {
		t.Error("wrote an approval whose id is a path")
	}
	bad = in
	bad.Policy = []byte("no_such_rule: true\n")
	if err := evidence.WriteChangeBundle(filepath.Join(t.TempDir(), "b"), bad, fx.server); err == nil {
		t.Error("wrote a policy that does not parse")
	}
}
