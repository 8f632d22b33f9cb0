package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// The API is played by a fake here: the real server path is tested end to
// end elsewhere. The fake checks what the CLI sends the way the server
// does: the envelope's signature under the registered key, and the
// statement against the card's digest, the policy, the caller and the
// nonce rules.

const (
	testToken    = "so_test_secret_token_never_printed"
	testCase     = "case_01"
	testApprover = "act_operator"
)

var testPolicy = approval.Policy{Quorum: 1, TTLHours: 72, NoSelfApproval: true, ProposerCannotApprove: true}

func testCard() repair.Card {
	// A long diff proves the card is printed untruncated; the escape
	// sequence proves it is printed safely.
	diff := "diff --git a/cart/cart.go b/cart/cart.go\n--- a/cart/cart.go\n+++ b/cart/cart.go\n@@ -1,3 +1,3 @@\n" +
		strings.Repeat("-\told := applyCoupon(total)\n+\tnew := applyCouponOnce(total)\n", 400) +
		"+// hidden\x1b[2K\n+// END-OF-DIFF-MARKER\n"
	return repair.Card{Case: testCase, Project: "proj_shop", Title: "Coupon applies twice", CandidateID: "cand_7",
		Attempt: 2, SubmittedBy: "act_fixer", Evidence: "authored", Base: strings.Repeat("a", 40), Candidate: strings.Repeat("b", 40),
		Branch: "signoff/case_01/2", Diff: diff, HarnessID: "harn_3", HarnessDigest: strings.Repeat("c", 64), Verdict: "verified",
		Reason: "fail-to-pass 1/1 passed", Fingerprint: "fp-1234",
		Table: []repair.Row{
			{Stage: "base", Run: 1, Outcome: "fail", Detail: "TestCouponAppliesOnce failed", Tests: []repair.Test{{Name: "TestCouponAppliesOnce", Kind: "fail_to_pass", Outcome: "fail"}}},
			{Stage: "candidate", Run: 1, Outcome: "pass", Detail: "all passed", Tests: []repair.Test{{Name: "TestCouponAppliesOnce", Kind: "fail_to_pass", Outcome: "pass"}, {Name: "TestTotal", Kind: "pass_to_pass", Outcome: "pass"}}},
		},
		Review:        "[advisory, model] looks right",
		HarnessSource: repair.Sources(map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n\nfunc TestCouponAppliesOnce(t *testing.T) { // SOURCE-MARKER\x1b[2K\n}\n")}),
		HarnessReview: signoff.HarnessReview{HarnessID: "harn_3", By: "act_pia", Decision: signoff.HarnessApprove, Note: "checks the total",
			ReviewDigest: strings.Repeat("e", 64), At: time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)},
		Defences: repair.Defences{Protected: []string{"**/*_test.go"}, Unprotected: []verify.Exemption{{Glob: "test/**", Reason: "fixtures, not tests"}},
			TestEdits:    []verify.TestEdit{{Path: "cart/cart_test.go", Change: verify.EditModified}},
			Findings:     []tamper.Finding{{Rule: "env-probe", Severity: tamper.Flag, Path: "cart/cart.go", Line: 3, Detail: "reads GOFLAGS\x1b[2K"}},
			BuildChanges: verify.BuildRefuse, Cache: "layered", Witness: []string{"run 1: all 10 harness results carried the witness of their pass"}}}
}

// fakeAPI plays the approval routes of the API.
type fakeAPI struct {
	t   *testing.T
	pub ed25519.PublicKey // the approver's registered key

	mu          sync.Mutex
	card        repair.Card
	subject     string // the subject_digest the fake answers with
	policy      approval.Policy
	policyDigst string
	requests    []string // method and path of every request
	posted      []postedApproval
	nonces      map[string]bool
	keyBodies   [][]byte
	badAuth     int
}

type postedApproval struct {
	via    string
	reason string
	stmt   approval.Statement
}

func newFakeAPI(t *testing.T, pub ed25519.PublicKey) (*fakeAPI, *httptest.Server) {
	t.Helper()
	card := testCard()
	d, err := card.Digest()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAPI{t: t, pub: pub, card: card, subject: d, policy: testPolicy, policyDigst: testPolicy.Digest(), nonces: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/me", func(w http.ResponseWriter, r *http.Request) {
		writeTestJSON(w, 200, signoff.Actor{ID: testApprover, WorkspaceID: "ws_1", Name: "olga", Role: signoff.RoleOperator})
	})
	mux.HandleFunc("GET /api/v1/cases/{id}/approval", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != testCase {
			writeTestProblem(w, 404, "not_found", "case "+r.PathValue("id")+" not found")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		writeTestJSON(w, 200, bugdesk.CardView{Card: f.card, SubjectDigest: f.subject, Policy: f.policy, PolicyDigest: f.policyDigst, State: "awaiting_approval"})
	})
	mux.HandleFunc("POST /api/v1/cases/{id}/approvals", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Envelope json.RawMessage `json:"envelope"`
			Via      string          `json:"via"`
			Reason   string          `json:"reason"`
		}
		if err := strictDecode(readBody(t, r), &in); err != nil {
			writeTestProblem(w, 422, "invalid", err.Error())
			return
		}
		env, st, err := approval.Open(in.Envelope)
		if err == nil {
			err = approval.Verify(env, st, f.pub)
		}
		if err == nil && env.Signatures[0].KeyID != keys.ID(f.pub) {
			err = signoff.Errorf(signoff.EFORBIDDEN, "key id %s is not the registered key", env.Signatures[0].KeyID)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if err == nil {
			err = approval.Check(st, approval.Expect{Case: r.PathValue("id"), SubjectDigest: f.subject, Policy: f.policy,
				Approver: testApprover, CaseOpener: "act_reporter", Proposer: f.card.SubmittedBy, Now: time.Now()})
		}
		if err == nil && f.nonces[st.Nonce] {
			err = signoff.Errorf(signoff.ECONFLICT, "nonce already used")
		}
		if err == nil && in.Via != "cli-signed" && in.Via != "cli-signed-yes" {
			err = signoff.Errorf(signoff.EINVALID, "via must be cli-signed or cli-signed-yes")
		}
		if err != nil {
			t.Errorf("the fake server refused the approval: %v", err)
			writeTestProblem(w, 422, "invalid", signoff.ErrorMessage(err))
			return
		}
		f.nonces[st.Nonce] = true
		f.posted = append(f.posted, postedApproval{via: in.Via, reason: in.Reason, stmt: st})
		state := "approved"
		if st.Decision == approval.Reject {
			state = "fixing"
		}
		writeTestJSON(w, 201, map[string]any{
			"approval": signoff.Approval{ID: "apv_1", CaseID: testCase, SubjectDigest: st.SubjectDigest, Decision: st.Decision, ApproverID: st.Approver, Status: signoff.ApprovalValid, Via: in.Via},
			"case":     signoff.Case{ID: testCase, State: state},
		})
	})
	mux.HandleFunc("POST /api/v1/keys", func(w http.ResponseWriter, r *http.Request) {
		body := readBody(t, r)
		f.mu.Lock()
		f.keyBodies = append(f.keyBodies, body)
		f.mu.Unlock()
		var in struct {
			PublicKey string `json:"public_key"`
		}
		if err := strictDecode(body, &in); err != nil {
			writeTestProblem(w, 422, "invalid", err.Error())
			return
		}
		blk, _ := pem.Decode([]byte(in.PublicKey))
		if blk == nil || blk.Type != "PUBLIC KEY" {
			writeTestProblem(w, 422, "invalid", "public_key must be a PEM public key")
			return
		}
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		pub, ok := k.(ed25519.PublicKey)
		if err != nil || !ok {
			writeTestProblem(w, 422, "invalid", "public_key must be an Ed25519 key")
			return
		}
		writeTestJSON(w, 201, signoff.ApproverKey{ID: keys.ID(pub), WorkspaceID: "ws_1", ActorID: testApprover, PublicKey: in.PublicKey})
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			f.badAuth++
			f.mu.Unlock()
			writeTestProblem(w, 401, "unauthorized", "a bearer token is required")
			return
		}
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) approvals() []postedApproval {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]postedApproval(nil), f.posted...)
}

func readBody(t *testing.T, r *http.Request) []byte {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("read request body: %v", err)
	}
	return b
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeTestProblem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "https://signoff.dev/problems/" + code, "status": status, "code": code, "detail": detail})
}

// cli runs the CLI in-process with the token in its environment and
// checks that the token shows up in none of its output.
func cli(t *testing.T, stdin io.Reader, srvURL string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	vars := map[string]string{"SIGNOFF_TOKEN": testToken, "SIGNOFF_URL": srvURL}
	var out, errOut bytes.Buffer
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code = run(context.Background(), &env{stdin: stdin, stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
	if strings.Contains(out.String()+errOut.String(), testToken) {
		t.Errorf("signoff %v printed the API token", args)
	}
	return out.String(), errOut.String(), code
}

// approverKey creates an approval key with keys init and returns its path
// and key.
func approverKey(t *testing.T) (string, ed25519.PrivateKey) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cfg", "signoff", "approver.key")
	if out, errOut, code := cli(t, nil, "", "keys", "init", "--key", path); code != 0 {
		t.Fatalf("keys init: exit %d\n%s%s", code, out, errOut)
	}
	k, err := keys.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, k
}

func TestApproveRefusesWithoutTerminal(t *testing.T) {
	t.Parallel()
	path, k := approverKey(t)
	f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
	// Typing the right case id on a pipe is not a person at a terminal.
	out, errOut, code := cli(t, strings.NewReader(testCase+"\n"), srv.URL, "approve", "--case", testCase, "--key", path)
	if code != signoff.Codes[signoff.EINVALID].ExitCode || !strings.Contains(errOut, "not a terminal: pass --yes") {
		t.Fatalf("approve without a terminal: exit %d, stderr %q", code, errOut)
	}
	if n := len(f.approvals()); n != 0 {
		t.Fatalf("%d approvals were posted without a terminal or --yes", n)
	}
	// The card was shown in full before anything was asked.
	card := testCard()
	d, _ := card.Digest()
	for _, want := range []string{
		fmt.Sprintf("%-18s %s", "Case:", testCase), "Coupon applies twice", "proj_shop", "cand_7 (attempt 2, submitted by act_fixer, evidence authored)",
		card.Base, card.Candidate, card.Branch, "harn_3 (digest " + card.HarnessDigest, "verified: fail-to-pass 1/1 passed",
		"stage base | run 1 | fail | TestCouponAppliesOnce failed | tests: TestCouponAppliesOnce (fail_to_pass) fail",
		"stage candidate | run 1 | pass | all passed | tests: TestCouponAppliesOnce (fail_to_pass) pass; TestTotal (pass_to_pass) pass",
		"fp-1234", "Review note (advisory only, not an approval): [advisory, model] looks right",
		`+// hidden\x1b[2K`, "+// END-OF-DIFF-MARKER", fmt.Sprintf("%-18s %s", "Subject digest:", d), "quorum 1, approvals live 72 hours", testPolicy.Digest(),
		"Harness test source (1 file(s), in full; the subject digest covers it):",
		"Harness file cart/coupon_repro_test.go (sha256 " + card.HarnessSource[0].SHA256, `// SOURCE-MARKER\x1b[2K`,
		"approve by act_pia at 2026-01-05T10:00:00Z, over review digest " + strings.Repeat("e", 64) + " (reproduction harn_3)", "checks the total",
		"Against a counterfeit verdict: 1 protected glob(s) restored from the harness before every run; build changes refuse; cache layered",
		"exempted from the frozen tree: test/** (fixtures, not tests)", "test edits discarded: 1", "cart/cart_test.go (modified)",
		`[flag] env-probe: reads GOFLAGS\x1b[2K`, "witness run 1: all 10 harness results carried the witness of their pass",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the card output lacks %q", want)
		}
	}
	if strings.Count(out, "applyCouponOnce(total)") != 400 {
		t.Errorf("the diff was not printed in full")
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a raw escape character reached the terminal")
	}
}

func TestApproveYesSignsAndPosts(t *testing.T) {
	t.Parallel()
	path, k := approverKey(t)
	f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
	out, errOut, code := cli(t, nil, srv.URL, "approve", "--case", testCase, "--yes", "--key", path)
	if code != 0 {
		t.Fatalf("approve --yes: exit %d\n%s", code, errOut)
	}
	got := f.approvals()
	if len(got) != 1 {
		t.Fatalf("posted %d approvals, want 1", len(got))
	}
	card := testCard()
	d, _ := card.Digest()
	st := got[0].stmt
	if got[0].via != "cli-signed-yes" || st.Decision != approval.Approve || st.SubjectDigest != d || st.PolicyDigest != testPolicy.Digest() ||
		st.Approver != testApprover || st.Case != testCase || len(st.Nonce) != 32 || st.ExpiresAt.Sub(st.IssuedAt) != testPolicy.TTL() {
		t.Fatalf("posted via %q statement %+v", got[0].via, st)
	}
	if !strings.Contains(out, "approval apv_1 recorded") || !strings.Contains(out, "case "+testCase+" is now approved") {
		t.Fatalf("approve output lacks the result:\n%s", out)
	}
}

func TestApproveRejectNeedsReasonAndSignsReject(t *testing.T) {
	t.Parallel()
	path, k := approverKey(t)
	f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
	if _, errOut, code := cli(t, nil, srv.URL, "approve", "--case", testCase, "--reject", "--yes", "--key", path); code != 2 || !strings.Contains(errOut, "--reject needs --reason") {
		t.Fatalf("--reject without --reason: exit %d, %q", code, errOut)
	}
	out, errOut, code := cli(t, nil, srv.URL, "approve", "--case", testCase, "--reject", "--reason", "changes the wrong file", "--yes", "--key", path)
	if code != 0 {
		t.Fatalf("approve --reject: exit %d\n%s", code, errOut)
	}
	if got := f.approvals(); len(got) != 1 || got[0].stmt.Decision != approval.Reject {
		t.Fatalf("posted %+v, want one rejection", got)
	}
	if got := f.approvals(); got[0].reason != "changes the wrong file" {
		t.Fatalf("reason sent: %q", got[0].reason)
	}
	if !strings.Contains(out, "reason (sent beside the signed statement and recorded): changes the wrong file") {
		t.Fatalf("the reason is not printed:\n%s", out)
	}
}

func TestApproveRefusesAMismatchedCard(t *testing.T) {
	t.Parallel()
	for name, tamper := range map[string]func(f *fakeAPI){
		// The server names the digest of another card than the one it sends.
		"card": func(f *fakeAPI) { f.card.Diff += "+// something the approver was not shown\n" },
		// The policy shown is not the one whose digest the server names.
		"policy": func(f *fakeAPI) { f.policy.Quorum = 2 },
		// A consistent card, digest and policy, but of another case.
		"other case": func(f *fakeAPI) { f.card.Case = "case_02"; f.subject, _ = f.card.Digest() },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, k := approverKey(t)
			f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
			tamper(f)
			_, errOut, code := cli(t, nil, srv.URL, "approve", "--case", testCase, "--yes", "--key", path)
			if code == 0 || !strings.Contains(errOut, "nothing was signed") {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if n := len(f.approvals()); n != 0 {
				t.Fatalf("%d approvals were posted", n)
			}
		})
	}
}

// TestApproveTypedCaseID plays a person at a terminal, so it does not run
// in parallel with the tests that have none.
func TestApproveTypedCaseID(t *testing.T) {
	path, k := approverKey(t)
	f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
	old := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { stdinIsTerminal = old })

	_, errOut, code := cli(t, strings.NewReader("case_0\n"), srv.URL, "approve", "--case", testCase, "--key", path)
	if code == 0 || !strings.Contains(errOut, "Type the case id to approve (or reject) exactly this digest: ") || !strings.Contains(errOut, "nothing was signed") {
		t.Fatalf("a mistyped case id: exit %d, stderr %q", code, errOut)
	}
	if n := len(f.approvals()); n != 0 {
		t.Fatalf("%d approvals were posted for a mistyped case id", n)
	}
	if _, errOut, code = cli(t, strings.NewReader(testCase+"\n"), srv.URL, "approve", "--case", testCase, "--key", path); code != 0 {
		t.Fatalf("the typed case id: exit %d, stderr %q", code, errOut)
	}
	if got := f.approvals(); len(got) != 1 || got[0].via != "cli-signed" {
		t.Fatalf("posted %+v, want one approval via cli-signed", got)
	}
}

func TestApiProblemsMapToExitCodes(t *testing.T) {
	t.Parallel()
	path, k := approverKey(t)
	f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
	_, errOut, code := cli(t, nil, srv.URL, "approve", "--case", "case_missing", "--yes", "--key", path)
	if code != signoff.Codes[signoff.ENOTFOUND].ExitCode || !strings.Contains(errOut, "case case_missing not found (HTTP 404 Not Found)") {
		t.Fatalf("a missing case: exit %d, stderr %q", code, errOut)
	}
	var out, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &stderr, getenv: func(k string) string {
		return map[string]string{"SIGNOFF_TOKEN": "so_wrong", "SIGNOFF_URL": srv.URL}[k]
	}}
	if code := run(context.Background(), e, []string{"approve", "--case", testCase, "--yes", "--key", path}); code != signoff.Codes[signoff.EUNAUTHORIZED].ExitCode {
		t.Fatalf("a wrong token: exit %d, stderr %q", code, stderr.String())
	}
	if n := len(f.approvals()); n != 0 {
		t.Fatalf("%d approvals were posted", n)
	}
}

func TestKeysInitCreatesAPrivateKeyOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cfg", "signoff")
	path := filepath.Join(dir, "approver.key")
	out, errOut, code := cli(t, nil, "", "keys", "init", "--key", path)
	if code != 0 {
		t.Fatalf("keys init: exit %d %s", code, errOut)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	if dst, err := os.Stat(dir); err != nil || dst.Mode().Perm() != 0o700 {
		t.Fatalf("key directory: %v, mode %v, want 0700", err, dst.Mode().Perm())
	}
	k, err := keys.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	pub := k.Public().(ed25519.PublicKey)
	pemPub, _ := keys.EncodePublic(pub)
	if !strings.Contains(out, "created approval key "+path+" (key id "+keys.ID(pub)+")") || !strings.Contains(out, string(pemPub)) {
		t.Fatalf("keys init output:\n%s", out)
	}
	before, _ := os.ReadFile(path)

	out, errOut, code = cli(t, nil, "", "keys", "init", "--key", path)
	if code != 0 || !strings.Contains(out, "already exists (key id "+keys.ID(pub)+")") {
		t.Fatalf("keys init again: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("keys init replaced an existing key")
	}
	// keys show still shows a key's public half, as before.
	if out, errOut, code = cli(t, nil, "", "keys", "show", "--key", path); code != 0 || !strings.Contains(out, "key id "+keys.ID(pub)) {
		t.Fatalf("keys show: exit %d\n%s%s", code, out, errOut)
	}
}

func TestKeysRegisterSendsOnlyThePublicKey(t *testing.T) {
	t.Parallel()
	path, k := approverKey(t)
	pub := k.Public().(ed25519.PublicKey)
	f, srv := newFakeAPI(t, pub)
	out, errOut, code := cli(t, nil, srv.URL, "keys", "register", "--key", path)
	if code != 0 || !strings.Contains(out, "registered approval key "+keys.ID(pub)) {
		t.Fatalf("keys register: exit %d\n%s%s", code, out, errOut)
	}
	f.mu.Lock()
	bodies := f.keyBodies
	f.mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d key registrations, want 1", len(bodies))
	}
	var in map[string]string
	if err := json.Unmarshal(bodies[0], &in); err != nil || len(in) != 1 {
		t.Fatalf("body %s: want exactly {\"public_key\": PEM} (%v)", bodies[0], err)
	}
	blk, _ := pem.Decode([]byte(in["public_key"]))
	if blk == nil || blk.Type != "PUBLIC KEY" {
		t.Fatalf("public_key is not a PEM public key: %q", in["public_key"])
	}
	if got, err := x509.ParsePKIXPublicKey(blk.Bytes); err != nil || !pub.Equal(got) {
		t.Fatalf("public_key is not the approver's key: %v", err)
	}
	file, _ := os.ReadFile(path)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	for what, secret := range map[string][]byte{
		"the key file":       file,
		"the seed (base64)":  []byte(base64.StdEncoding.EncodeToString(k.Seed())),
		"the key (base64)":   []byte(base64.StdEncoding.EncodeToString(k)),
		"the PKCS#8 (b64)":   []byte(base64.StdEncoding.EncodeToString(der)),
		"the PKCS#8 (bytes)": der,
		"the seed (bytes)":   k.Seed(),
	} {
		if bytes.Contains(bodies[0], secret) {
			t.Errorf("keys register sent %s", what)
		}
	}
}
