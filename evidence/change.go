package evidence

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// A change bundle is the evidence of one change case (SPEC section 4), in
// the same form as a verification bundle: a directory whose files are each
// named, by SHA-256, by one signed in-toto statement.
//
//	case.json                     the case as exported: state, title, reason,
//	                              the plan and approved digests, and the
//	                              approvals, keys and receipts below
//	plan.json                     the plan's canonical JSON exactly as stored;
//	                              its digest is what approvers signed
//	review.json                   the policy review of the plan (change.Result)
//	policy.yaml                   the change policy as written
//	approvals/<id>.json           each approval's DSSE envelope as received
//	keys/<keyid>.pub              the approvers' registered public keys (PEM)
//	receipts/<id>.json            each receipt's DSSE envelope as signed
//	statements/change.dsse.json   the signed statement naming every file above
//	signer.pub                    the public key that signed (PEM); it proves
//	                              nothing by itself
//
// VerifyBundle tells the kinds apart by their top statement: a change
// bundle has statements/change.dsse.json, a verification bundle
// statements/verdict.dsse.json.
const (
	caseFile     = "case.json"
	planFile     = "plan.json"
	reviewFile   = "review.json"
	policyFile   = "policy.yaml"
	approvalsDir = "approvals"
	keysDir      = "keys"
	receiptsDir  = "receipts"
	changeFile   = "statements/change.dsse.json"
)

// Bundle kinds, as Findings.Kind reports them.
const (
	KindVerification = "verification"
	KindChange       = "change"
)

// Predicate and payload types of a change bundle.
const (
	// PredicateChange is the predicate type of a change bundle's statement.
	PredicateChange = "https://signoff.dev/change/evidence/v1"
	// PredicateChangeReceipt is the predicate type of a receipt statement
	// (changedesk.ReceiptPredicate; changedesk imports this package, so
	// the string is repeated here and a test keeps the two equal).
	PredicateChangeReceipt = "https://signoff.dev/change/receipt/v1"
	// ApprovalPayloadType is the DSSE payload type of an approval
	// (approval.PayloadType, repeated for the same reason).
	ApprovalPayloadType = "application/vnd.signoff.approval+json"
)

// ChangeCase is what case.json says about the case, besides the lists the
// writer fills in.
type ChangeCase struct {
	Case       string `json:"case"`
	ProjectID  string `json:"project_id"`
	State      string `json:"state"`
	Title      string `json:"title"`
	Reason     string `json:"reason"`
	Opener     string `json:"opener"`
	Incident   string `json:"incident,omitempty"`
	RevertOf   string `json:"revert_of,omitempty"`
	RevertedBy string `json:"reverted_by,omitempty"`
	// PlanID and PlanDigest name the plan in plan.json; Proposer drafted
	// it, Via says how.
	PlanID     string `json:"plan_id"`
	PlanDigest string `json:"plan_digest"`
	Proposer   string `json:"proposer"`
	Via        string `json:"via"`
	// ApprovedDigest and ApprovedPolicyDigest are what the quorum approved
	// (or the desk pre-approved); empty before that.
	ApprovedDigest       string `json:"approved_digest,omitempty"`
	ApprovedPolicyDigest string `json:"approved_policy_digest,omitempty"`
	Preapproved          bool   `json:"preapproved,omitempty"`
}

// BundleApproval is one stored approval of the plan.
type BundleApproval struct {
	ID       string
	Approver string
	KeyID    string
	Decision string
	Status   string // valid, consumed, superseded
	Via      string
	Envelope []byte // the DSSE envelope as the approver sent it
}

// BundleKey is an approver's registered public key: an Ed25519 key, or
// (Passkey set, Public nil) a passkey credential as passkey.Credential's
// PEM text, which carries its COSE key, credential id and RP id.
type BundleKey struct {
	Actor   string
	Public  ed25519.PublicKey
	Passkey string
}

// BundleReceipt is one stored receipt.
type BundleReceipt struct {
	ID       string
	Kind     string // execute, rollback, bypass
	Digest   string // SHA-256 of the envelope's payload, as the ledger records it
	Envelope []byte
}

// ChangeBundleInput is everything a change bundle holds.
type ChangeBundleInput struct {
	Case ChangeCase
	// Plan is the stored canonical plan; Review the stored review
	// (change.Result as JSON); Policy the policy YAML (empty: the empty
	// policy, which allows nothing).
	Plan, Review, Policy []byte
	Approvals            []BundleApproval
	Keys                 []BundleKey
	Receipts             []BundleReceipt
}

// ChangeSummary is case.json.
type ChangeSummary struct {
	Kind string `json:"kind"` // always "change"
	ChangeCase
	// PolicyDigest is the digest of policy.yaml as change.Parse reads it.
	PolicyDigest string            `json:"policy_digest"`
	Approvals    []SummaryApproval `json:"approvals"`
	Keys         []SummaryKey      `json:"keys"`
	Receipts     []SummaryReceipt  `json:"receipts"`
}

// SummaryApproval lists one approval file.
type SummaryApproval struct {
	ID       string `json:"id"`
	File     string `json:"file"`
	Approver string `json:"approver"`
	KeyID    string `json:"key_id"`
	Decision string `json:"decision"`
	Status   string `json:"status"`
	Via      string `json:"via"`
}

// SummaryKey lists one approver key file.
type SummaryKey struct {
	ID    string `json:"id"`
	File  string `json:"file"`
	Actor string `json:"actor"`
}

// SummaryReceipt lists one receipt file.
type SummaryReceipt struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Kind   string `json:"kind"`
	Digest string `json:"digest"`
}

// ChangePredicate is the predicate of a change bundle's statement.
type ChangePredicate struct {
	EvidenceType string `json:"evidence_type"`
	SignerKeyID  string `json:"signer_keyid"`
	Case         string `json:"case"`
	PlanDigest   string `json:"plan_digest"`
	PolicyDigest string `json:"policy_digest"`
}

var keyIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// WriteChangeBundle writes the evidence of one change case into dir, which
// must not exist or be empty, and signs it with key (the server's, which
// signed the receipts). It copies what it is given byte for byte and
// checks only that the ids can name files and the policy parses (its
// digest goes into case.json); whether the rest holds together is
// VerifyBundle's to say.
func WriteChangeBundle(dir string, in ChangeBundleInput, key ed25519.PrivateKey) error {
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("evidence: no signing key")
	}
	c := in.Case
	switch {
	case !signoff.ValidID(signoff.PrefixCase, c.Case):
		return fmt.Errorf("evidence: invalid case id %q", c.Case)
	case !signoff.ValidID(change.PrefixPlan, c.PlanID) || len(in.Plan) == 0:
		return fmt.Errorf("evidence: case %s has no plan", c.Case)
	}
	pol, err := change.Parse(in.Policy)
	if err != nil {
		return fmt.Errorf("evidence: policy: %w", err)
	}
	sum := ChangeSummary{Kind: KindChange, ChangeCase: c, PolicyDigest: pol.Digest(),
		Approvals: []SummaryApproval{}, Keys: []SummaryKey{}, Receipts: []SummaryReceipt{}}
	seen := map[string]bool{}
	for _, a := range in.Approvals {
		if !signoff.ValidID(signoff.PrefixApproval, a.ID) || seen[a.ID] {
			return fmt.Errorf("evidence: invalid or repeated approval id %q", a.ID)
		}
		seen[a.ID] = true
		sum.Approvals = append(sum.Approvals, SummaryApproval{ID: a.ID, File: approvalsDir + "/" + a.ID + ".json",
			Approver: a.Approver, KeyID: a.KeyID, Decision: a.Decision, Status: a.Status, Via: a.Via})
	}
	pems := map[string][]byte{}
	for _, k := range in.Keys {
		if k.Passkey != "" {
			cred, err := passkey.ParseCredential(k.Passkey)
			if err != nil {
				return fmt.Errorf("evidence: passkey of %s: %w", k.Actor, err)
			}
			id := cred.KeyID()
			if pems[id] == nil {
				pems[id] = []byte(cred.Encode())
				sum.Keys = append(sum.Keys, SummaryKey{ID: id, File: keysDir + "/" + id + ".pub", Actor: k.Actor})
			}
			continue
		}
		if len(k.Public) != ed25519.PublicKeySize {
			return fmt.Errorf("evidence: key of %s is not an Ed25519 public key", k.Actor)
		}
		id := keys.ID(k.Public)
		if pems[id] != nil {
			continue
		}
		if pems[id], err = keys.EncodePublic(k.Public); err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
		sum.Keys = append(sum.Keys, SummaryKey{ID: id, File: keysDir + "/" + id + ".pub", Actor: k.Actor})
	}
	slices.SortFunc(sum.Keys, func(a, b SummaryKey) int { return strings.Compare(a.ID, b.ID) })
	for _, r := range in.Receipts {
		if !signoff.ValidID(signoff.PrefixReceipt, r.ID) || seen[r.ID] {
			return fmt.Errorf("evidence: invalid or repeated receipt id %q", r.ID)
		}
		seen[r.ID] = true
		sum.Receipts = append(sum.Receipts, SummaryReceipt{ID: r.ID, File: receiptsDir + "/" + r.ID + ".json", Kind: r.Kind, Digest: r.Digest})
	}
	caseJSON, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return fmt.Errorf("evidence: %w", err)
	} else if len(ents) > 0 {
		return fmt.Errorf("evidence: %s is not empty", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	defer root.Close()
	w := writer{root: root}
	subjects := []Subject{
		w.file(caseFile, append(caseJSON, '\n')),
		w.file(planFile, in.Plan),
		w.file(reviewFile, in.Review),
		w.file(policyFile, in.Policy),
	}
	for i, a := range in.Approvals {
		subjects = append(subjects, w.file(sum.Approvals[i].File, a.Envelope))
	}
	for _, k := range sum.Keys {
		subjects = append(subjects, w.file(k.File, pems[k.ID]))
	}
	for i, r := range in.Receipts {
		subjects = append(subjects, w.file(sum.Receipts[i].File, r.Envelope))
	}
	slices.SortFunc(subjects, func(a, b Subject) int { return strings.Compare(a.Name, b.Name) })
	pub := key.Public().(ed25519.PublicKey)
	w.statement(changeFile, PredicateChange, subjects, ChangePredicate{EvidenceType: EvidenceLive, SignerKeyID: keys.ID(pub),
		Case: c.Case, PlanDigest: c.PlanDigest, PolicyDigest: sum.PolicyDigest}, key)
	if pemPub, err := keys.EncodePublic(pub); err != nil {
		w.fail(err)
	} else {
		w.file(signerFile, pemPub)
	}
	if w.err != nil {
		return fmt.Errorf("evidence: write change bundle %s: %w", dir, w.err)
	}
	return nil
}

// ChangeFindings is what VerifyBundle read from a change bundle, for
// people: the case, its digests, the approvals and what each receipt
// says happened. Every item here has a Finding saying whether it checked.
type ChangeFindings struct {
	Case         string            `json:"case"`
	State        string            `json:"state"`
	Title        string            `json:"title"`
	PlanID       string            `json:"plan_id"`
	PlanDigest   string            `json:"plan_digest"`
	PolicyDigest string            `json:"policy_digest"`
	ReviewOK     bool              `json:"review_ok"`
	Approvals    []ApprovalFinding `json:"approvals"`
	Receipts     []ReceiptFinding  `json:"receipts"`
}

// ApprovalFinding is one approval as the bundle shows it.
type ApprovalFinding struct {
	ID       string `json:"id"`
	Approver string `json:"approver"`
	KeyID    string `json:"key_id"`
	Decision string `json:"decision"`
	Verified bool   `json:"verified"`
}

// ReceiptFinding is one receipt as the bundle shows it, with its health
// results.
type ReceiptFinding struct {
	ID           string    `json:"id"`
	Kind         string    `json:"kind"`
	Outcome      string    `json:"outcome"`
	Target       string    `json:"target"`
	Executor     string    `json:"executor"`
	Approvals    []string  `json:"approvals"`
	Preapproved  bool      `json:"preapproved,omitempty"`
	HealthPassed bool      `json:"health_passed"`
	Probes       int       `json:"probes"`
	ProbesOK     int       `json:"probes_ok"`
	Health       string    `json:"health"`
	StartedAt    time.Time `json:"started_at"`
	FinishedAt   time.Time `json:"finished_at"`
	Verified     bool      `json:"verified"`
}

// approvalStatement is approval.Statement (package approval imports this
// one): the fields an approver signs, in its canonical form.
type approvalStatement struct {
	Case          string    `json:"case"`
	SubjectDigest string    `json:"subject_digest"`
	Decision      string    `json:"decision"`
	Nonce         string    `json:"nonce"`
	IssuedAt      time.Time `json:"issued_at"`
	ExpiresAt     time.Time `json:"expires_at"`
	PolicyDigest  string    `json:"policy_digest"`
	Approver      string    `json:"approver"`
}

// receiptState, receiptProbe and receiptPredicate are the parts of
// changedesk.ReceiptBody a change bundle checks.
type receiptState struct {
	Digest  string `json:"digest"`
	Content string `json:"content_digest"`
}

type receiptProbe struct {
	At     time.Time `json:"at"`
	OK     bool      `json:"ok"`
	Status int       `json:"status"`
	Detail string    `json:"detail"`
}

type receiptApproval struct {
	ID            string `json:"id"`
	Approver      string `json:"approver"`
	KeyID         string `json:"key_id"`
	SubjectDigest string `json:"subject_digest"`
}

type receiptPredicate struct {
	Case         string            `json:"case"`
	PlanID       string            `json:"plan_id"`
	PlanDigest   string            `json:"plan_digest"`
	ActionDigest string            `json:"action_digest"`
	PolicyDigest string            `json:"policy_digest"`
	Kind         string            `json:"kind"`
	Target       string            `json:"target"`
	Approvals    []receiptApproval `json:"approvals"`
	Preapproved  bool              `json:"preapproved"`
	Executor     string            `json:"executor"`
	Before       receiptState      `json:"before"`
	After        *receiptState     `json:"after"`
	ApplyError   string            `json:"apply_error"`
	Health       struct {
		Passed bool           `json:"passed"`
		Probes []receiptProbe `json:"probes"`
	} `json:"health"`
	Restored     *receiptState `json:"restored"`
	RestoreError string        `json:"restore_error"`
	Outcome      string        `json:"outcome"`
	Detail       string        `json:"detail"`
	RevertOf     string        `json:"revert_of"`
	StartedAt    time.Time     `json:"started_at"`
	FinishedAt   time.Time     `json:"finished_at"`
}

// Receipt outcomes (changedesk's).
const (
	outcomeExecuted      = "executed"
	outcomeRolledBack    = "rolled_back"
	outcomeRestoreFailed = "restore_failed"
	outcomeDrifted       = "drifted"
	outcomeInterrupted   = "interrupted"
)

// changeCheck carries what checkChange has established so far.
type changeCheck struct {
	f         *Findings
	root      *os.Root
	named     map[string]string // subject name -> digest, of the change statement
	digests   map[string]string // file -> sha256, as read
	keysToUse []ed25519.PublicKey
	self      bool
}

// read returns a file the change statement names, when its digest is the
// one named (a mismatch or an unreadable file is already a finding).
func (cc *changeCheck) read(item, name string) ([]byte, bool) {
	want, ok := cc.named[name]
	if !ok {
		if _, err := cc.root.Stat(name); err != nil {
			cc.f.add(item, StatusFailed, "%s is missing from the bundle and its statement", name)
		} else {
			cc.f.add(name, StatusFailed, "not named by the change statement")
		}
		return nil, false
	}
	if cc.digests[name] != want {
		cc.f.add(item, StatusFailed, "%s is missing or does not match its digest, so it is not used", name)
		return nil, false
	}
	b, err := cc.root.ReadFile(name)
	if err != nil || verify.SHA256(b) != want {
		cc.f.add(item, StatusFailed, "%s changed while it was read", name)
		return nil, false
	}
	return b, true
}

// checkChange checks a change bundle once its statements and subjects are
// checked: what case.json says against the plan, the policy, the review,
// every approval (signature under the bundled key of its approver, the
// plan's digest, the case, the policy) and every receipt (signature under
// the trusted key, the plan's digest, the policy digest, the approvals it
// consumed, the gate's checks replayed on what it recorded, the outcome
// against its health results).
func checkChange(f *Findings, root *os.Root, stmts map[string]*parsed, digests map[string]string, files map[string]bool,
	bundleKey ed25519.PublicKey, keysToUse []ed25519.PublicKey, selfSigned bool) {
	f.Kind = KindChange
	st := stmts[changeFile]
	if st == nil {
		f.add(changeFile, StatusFailed, "missing: the bundle has no change statement")
		return
	}
	if !st.ok {
		f.add("change", StatusFailed, "the change statement did not verify, so nothing it names can be checked")
		return
	}
	if st.statement.PredicateType != PredicateChange {
		f.add(changeFile, StatusFailed, "predicateType %q, want %q", st.statement.PredicateType, PredicateChange)
		return
	}
	for _, file := range sortedKeys(stmts) {
		if file != changeFile {
			f.add(file, StatusFailed, "a change bundle holds one statement, %s; this one does not belong", changeFile)
		}
	}
	var pred ChangePredicate
	if err := strictUnmarshal(st.statement.Predicate, &pred); err != nil {
		f.add(changeFile, StatusFailed, "predicate: %v", err)
		return
	}
	if pred.EvidenceType != EvidenceLive {
		f.add("evidence type", StatusFailed, "%q, want %q", pred.EvidenceType, EvidenceLive)
	}
	if bundleKey != nil && keys.ID(bundleKey) != pred.SignerKeyID {
		f.add(signerFile, StatusFailed, "holds key %s, the change statement names signer %s", keys.ID(bundleKey), pred.SignerKeyID)
	}
	cc := &changeCheck{f: f, root: root, named: map[string]string{}, digests: digests, keysToUse: keysToUse, self: selfSigned}
	for _, s := range st.statement.Subject {
		cc.named[s.Name] = s.Digest.SHA256
	}

	// case.json
	raw, ok := cc.read("case", caseFile)
	if !ok {
		f.add("case", StatusFailed, "without %s nothing else in the bundle can be tied to a case", caseFile)
		return
	}
	var sum ChangeSummary
	if err := strictUnmarshal(raw, &sum); err != nil {
		f.add(caseFile, StatusFailed, "%v", err)
		return
	}
	cf := &ChangeFindings{Case: sum.Case, State: sum.State, Title: sum.Title, PlanID: sum.PlanID, PlanDigest: sum.PlanDigest, PolicyDigest: sum.PolicyDigest}
	f.Change = cf
	switch {
	case sum.Kind != KindChange:
		f.add("case", StatusFailed, "%s says kind %q, want %q", caseFile, sum.Kind, KindChange)
	case sum.Case != pred.Case || sum.PlanDigest != pred.PlanDigest || sum.PolicyDigest != pred.PolicyDigest:
		f.add("case", StatusFailed, "%s (case %s, plan %s, policy %s) disagrees with the signed statement (case %s, plan %s, policy %s)",
			caseFile, sum.Case, short(sum.PlanDigest), short(sum.PolicyDigest), pred.Case, short(pred.PlanDigest), short(pred.PolicyDigest))
	default:
		f.add("case", StatusOK, "change case %s (%s), plan %s", sum.Case, sum.State, sum.PlanID)
	}
	listed := map[string]bool{caseFile: true, planFile: true, reviewFile: true, policyFile: true}
	for _, a := range sum.Approvals {
		listed[a.File] = true
	}
	for _, k := range sum.Keys {
		listed[k.File] = true
	}
	for _, r := range sum.Receipts {
		listed[r.File] = true
	}
	for _, name := range sortedKeys(files) {
		if name != signerFile && name != changeFile && !strings.HasPrefix(name, statementsDir+"/") && !listed[name] {
			f.add(name, StatusFailed, "not listed in %s", caseFile)
		}
	}

	// plan.json: its digest is what everything else names.
	var plan change.Plan
	planOK := false
	if b, ok := cc.read("plan digest", planFile); ok {
		p, err := change.DecodePlan(b)
		d, derr := change.PlanDigest(p)
		canon, cerr := change.Canonical(p)
		switch {
		case err != nil:
			f.add("plan digest", StatusFailed, "%s: %v", planFile, signoff.ErrorMessage(err))
		case derr != nil || cerr != nil:
			f.add("plan digest", StatusFailed, "%s cannot be digested: %v", planFile, errors.Join(derr, cerr))
		case !bytes.Equal(canon, b):
			f.add("plan digest", StatusFailed, "%s is not the plan's canonical JSON", planFile)
		case d != sum.PlanDigest:
			f.add("plan digest", StatusFailed, "recomputed %s from %s, %s records %s", short(d), planFile, caseFile, short(sum.PlanDigest))
		case sum.ApprovedDigest != "" && sum.ApprovedDigest != d:
			f.add("plan digest", StatusFailed, "recomputed %s from %s, but the case was approved for %s", short(d), planFile, short(sum.ApprovedDigest))
		default:
			plan, planOK = p, true
			f.add("plan digest", StatusOK, "recomputed %s from %s: %s %s", short(d), planFile, p.Kind, p.Target)
		}
	}

	// policy.yaml
	var pol change.Policy
	polOK := false
	if b, ok := cc.read("policy digest", policyFile); ok {
		p, err := change.Parse(b)
		switch {
		case err != nil:
			f.add("policy digest", StatusFailed, "%s: %v", policyFile, signoff.ErrorMessage(err))
		case p.Digest() != sum.PolicyDigest:
			f.add("policy digest", StatusFailed, "recomputed %s from %s, %s records %s", short(p.Digest()), policyFile, caseFile, short(sum.PolicyDigest))
		case sum.ApprovedPolicyDigest != "" && sum.ApprovedPolicyDigest != p.Digest():
			f.add("policy digest", StatusFailed, "recomputed %s from %s, but the case was approved under policy %s: the bundle does not carry the policy in force", short(p.Digest()), policyFile, short(sum.ApprovedPolicyDigest))
		default:
			pol, polOK = p, true
			f.add("policy digest", StatusOK, "recomputed %s from %s", short(p.Digest()), policyFile)
		}
	}

	// review.json
	if b, ok := cc.read("review", reviewFile); ok {
		var res change.Result
		if err := strictUnmarshal(b, &res); err != nil {
			f.add("review", StatusFailed, "%s: %v", reviewFile, err)
		} else if (len(res.Failed()) == 0 && len(res.Rules) > 0) != res.OK {
			f.add("review", StatusFailed, "%s says ok=%v, but %d of %d rule(s) failed", reviewFile, res.OK, len(res.Failed()), len(res.Rules))
		} else if !res.OK && len(sum.Receipts) > 0 {
			f.add("review", StatusFailed, "the review failed (%d rule(s)), yet the change has receipts", len(res.Failed()))
		} else {
			cf.ReviewOK = res.OK
			verdict := "passed"
			if !res.OK {
				verdict = fmt.Sprintf("failed %d rule(s)", len(res.Failed()))
			}
			f.add("review", StatusOK, "the policy review %s (%d rule(s); as recorded, not re-run: rules such as the window depend on when it ran)", verdict, len(res.Rules))
		}
	}

	// keys/
	type approverKey struct {
		actor string
		pub   ed25519.PublicKey
		cred  *passkey.Credential // a passkey's, instead of pub
	}
	akeys := map[string]approverKey{}
	for _, k := range sum.Keys {
		item := "key " + k.ID
		if k.File != keysDir+"/"+k.ID+".pub" || !keyIDPattern.MatchString(k.ID) {
			f.add(item, StatusFailed, "%s lists it as %q", caseFile, k.File)
			continue
		}
		b, ok := cc.read(item, k.File)
		if !ok {
			continue
		}
		if passkey.IsCredential(string(b)) {
			cred, err := passkey.ParseCredential(string(b))
			switch {
			case err != nil:
				f.add(item, StatusFailed, "%s: %v", k.File, err)
			case cred.KeyID() != k.ID:
				f.add(item, StatusFailed, "%s holds passkey %s", k.File, cred.KeyID())
			default:
				akeys[k.ID] = approverKey{actor: k.Actor, cred: &cred}
				f.add(item, StatusOK, "passkey (WebAuthn credential for %s) of %s, as the server registered it (the signed statement vouches for it)", cred.RPID, k.Actor)
			}
			continue
		}
		pub, err := parsePublicPEM(b)
		if err != nil {
			f.add(item, StatusFailed, "%s: %v", k.File, err)
			continue
		}
		if keys.ID(pub) != k.ID {
			f.add(item, StatusFailed, "%s holds key %s", k.File, keys.ID(pub))
			continue
		}
		akeys[k.ID] = approverKey{actor: k.Actor, pub: pub}
		f.add(item, StatusOK, "Ed25519 key of %s, as the server registered it (the signed statement vouches for it)", k.Actor)
	}

	// approvals/
	apvs := map[string]approvalStatement{}
	for _, a := range sum.Approvals {
		item := "approval " + a.ID
		af := ApprovalFinding{ID: a.ID, Approver: a.Approver, KeyID: a.KeyID, Decision: a.Decision}
		func() {
			defer func() { cf.Approvals = append(cf.Approvals, af) }()
			if a.File != approvalsDir+"/"+a.ID+".json" || !signoff.ValidID(signoff.PrefixApproval, a.ID) {
				f.add(item, StatusFailed, "%s lists it as %q", caseFile, a.File)
				return
			}
			b, ok := cc.read(item, a.File)
			if !ok {
				return
			}
			var (
				keyID string
				stmt  approvalStatement
				err   error
				penv  passkey.Envelope
				env   Envelope
			)
			isPasskey := passkey.IsEnvelope(b)
			if isPasskey {
				penv, stmt, err = openPasskeyApproval(b)
				keyID = penv.KeyID
			} else if env, stmt, err = openApproval(b); err == nil {
				keyID = env.Signatures[0].KeyID
			}
			if err != nil {
				f.add(item, StatusFailed, "%s: %v", a.File, err)
				return
			}
			k, ok := akeys[keyID]
			if !ok {
				f.add(item, StatusFailed, "signed with key %s, which the bundle does not carry", keyID)
				return
			}
			how := "signature verifies under"
			switch {
			case isPasskey && k.cred == nil, !isPasskey && k.cred != nil:
				f.add(item, StatusFailed, "key %s is not of the kind that made this approval", keyID)
				return
			case isPasskey:
				// Offline: the origin must be on the credential's RP id;
				// the server checked its exact origin and the sign counter.
				if _, err := passkey.Verify(penv, *k.cred, passkey.Expect{}); err != nil {
					f.add(item, StatusFailed, "passkey assertion: %v (passkey %s of %s)", err, keyID, k.actor)
					return
				}
				how = "passkey assertion (challenge = SHA-256 of the statement, user verified) verifies under"
			default:
				payload, _ := canonical.Marshal(stmt)
				if _, err := env.Verify(payload, []ed25519.PublicKey{k.pub}); err != nil {
					f.add(item, StatusFailed, "signature: %v (key %s of %s)", err, keyID, k.actor)
					return
				}
			}
			var bad []string
			check := func(ok bool, format string, args ...any) {
				if !ok {
					bad = append(bad, fmt.Sprintf(format, args...))
				}
			}
			check(stmt.Case == sum.Case, "it is for case %s, not %s", stmt.Case, sum.Case)
			check(stmt.SubjectDigest == sum.PlanDigest, "it approves digest %s, not the plan's %s", short(stmt.SubjectDigest), short(sum.PlanDigest))
			check(stmt.Approver == k.actor, "it names approver %s, but key %s is registered to %s", stmt.Approver, keyID, k.actor)
			check(stmt.Approver == a.Approver && keyID == a.KeyID && stmt.Decision == a.Decision,
				"%s lists %s/%s/%s, the envelope says %s/%s/%s", caseFile, a.Approver, a.KeyID, a.Decision, stmt.Approver, keyID, stmt.Decision)
			check(stmt.PolicyDigest == sum.PolicyDigest, "it was made under policy %s, the bundle's is %s", short(stmt.PolicyDigest), short(sum.PolicyDigest))
			check(stmt.ExpiresAt.After(stmt.IssuedAt), "it expires before it is issued")
			if len(bad) > 0 {
				f.add(item, StatusFailed, "%s", strings.Join(bad, "; "))
				return
			}
			af.Verified = true
			apvs[a.ID] = stmt
			f.add(item, StatusOK, "%s by %s over plan %s, %s %s's key %s; issued %s, expires %s",
				stmt.Decision, stmt.Approver, short(stmt.SubjectDigest), how, k.actor, keyID,
				stmt.IssuedAt.UTC().Format(time.RFC3339), stmt.ExpiresAt.UTC().Format(time.RFC3339))
		}()
	}

	// receipts/
	if len(sum.Receipts) == 0 {
		switch sum.State {
		case workflow.ChangeExecuted, workflow.ChangeRolledBack, workflow.ChangeReverted:
			f.add("receipts", StatusFailed, "the case is %s but the bundle has no receipt", sum.State)
		default:
			f.add("receipts", StatusOK, "none: the gate has not executed this case (%s)", sum.State)
		}
	}
	for _, r := range sum.Receipts {
		rf := cc.checkReceipt(r, sum, plan, planOK, pol, polOK, apvs)
		cf.Receipts = append(cf.Receipts, rf)
	}
	f.add("execution", StatusUnchecked, "not re-executed: the live states, the per-target lock and the health probes are as the server's gate recorded them")
}

// openApproval decodes an approval envelope as approval.Open does.
func openApproval(b []byte) (Envelope, approvalStatement, error) {
	env, payload, err := DecodeEnvelope(b)
	if err != nil {
		return env, approvalStatement{}, err
	}
	if env.PayloadType != ApprovalPayloadType {
		return env, approvalStatement{}, fmt.Errorf("payload type %q, want %q", env.PayloadType, ApprovalPayloadType)
	}
	if len(env.Signatures) != 1 {
		return env, approvalStatement{}, fmt.Errorf("want exactly one signature, got %d", len(env.Signatures))
	}
	var st approvalStatement
	if err := json.Unmarshal(payload, &st); err != nil {
		return env, approvalStatement{}, fmt.Errorf("statement: %w", err)
	}
	if want, err := canonical.Marshal(st); err != nil || !bytes.Equal(want, payload) {
		return env, approvalStatement{}, errors.New("statement is not in canonical form (unknown fields or another encoding)")
	}
	return env, st, nil
}

// openPasskeyApproval decodes a passkey approval envelope as
// approval.OpenAny does: strictly, its statement in canonical form.
func openPasskeyApproval(b []byte) (passkey.Envelope, approvalStatement, error) {
	env, err := passkey.Open(b)
	if err != nil {
		return env, approvalStatement{}, err
	}
	var st approvalStatement
	if err := json.Unmarshal(env.Statement, &st); err != nil {
		return env, approvalStatement{}, fmt.Errorf("statement: %w", err)
	}
	if want, err := canonical.Marshal(st); err != nil || !bytes.Equal(want, env.Statement) {
		return env, approvalStatement{}, errors.New("statement is not in canonical form (unknown fields or another encoding)")
	}
	return env, st, nil
}

// checkReceipt checks one receipt and returns what it says.
func (cc *changeCheck) checkReceipt(r SummaryReceipt, sum ChangeSummary, plan change.Plan, planOK bool,
	pol change.Policy, polOK bool, apvs map[string]approvalStatement) ReceiptFinding {
	f := cc.f
	item := "receipt " + r.ID
	rf := ReceiptFinding{ID: r.ID, Kind: r.Kind}
	if r.File != receiptsDir+"/"+r.ID+".json" || !signoff.ValidID(signoff.PrefixReceipt, r.ID) {
		f.add(item, StatusFailed, "%s lists it as %q", caseFile, r.File)
		return rf
	}
	b, ok := cc.read(item, r.File)
	if !ok {
		return rf
	}
	env, payload, err := DecodeEnvelope(b)
	if err != nil {
		f.add(item, StatusFailed, "%s: %v", r.File, err)
		return rf
	}
	if env.PayloadType != PayloadType {
		f.add(item, StatusFailed, "payload type %q, want %q", env.PayloadType, PayloadType)
		return rf
	}
	if d := verify.SHA256(payload); d != r.Digest {
		f.add(item, StatusFailed, "its payload digest is %s, %s (and the ledger) record %s", short(d), caseFile, short(r.Digest))
		return rf
	}
	signedBy := "signature not verified"
	if len(cc.keysToUse) > 0 {
		k, err := env.Verify(payload, cc.keysToUse)
		if err != nil {
			f.add(item, StatusFailed, "signature: %v", err)
			return rf
		}
		if cc.self {
			signedBy = "signature verifies under the bundle's own key " + keys.ID(k)
		} else {
			signedBy = "signature verifies under trusted key " + keys.ID(k)
		}
	}
	var st Statement
	if err := strictUnmarshal(payload, &st); err != nil {
		f.add(item, StatusFailed, "statement: %v", err)
		return rf
	}
	var rp receiptPredicate
	switch {
	case st.Type != StatementType:
		f.add(item, StatusFailed, "_type %q, want %q", st.Type, StatementType)
		return rf
	case st.PredicateType != PredicateChangeReceipt:
		f.add(item, StatusFailed, "predicateType %q, want %q", st.PredicateType, PredicateChangeReceipt)
		return rf
	case len(st.Subject) != 1:
		f.add(item, StatusFailed, "want one subject (the plan), got %d", len(st.Subject))
		return rf
	}
	if err := json.Unmarshal(st.Predicate, &rp); err != nil {
		f.add(item, StatusFailed, "predicate: %v", err)
		return rf
	}
	rf.Outcome, rf.Target, rf.Executor, rf.Preapproved = rp.Outcome, rp.Target, rp.Executor, rp.Preapproved
	rf.StartedAt, rf.FinishedAt = rp.StartedAt, rp.FinishedAt
	for _, a := range rp.Approvals {
		rf.Approvals = append(rf.Approvals, a.ID)
	}

	var bad []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	sub := st.Subject[0]
	check(sub.Name == "plan/"+sum.PlanID && sub.Digest.SHA256 == sum.PlanDigest,
		"its subject is %s %s, not plan/%s %s", sub.Name, short(sub.Digest.SHA256), sum.PlanID, short(sum.PlanDigest))
	check(rp.Case == sum.Case, "it is for case %s, not %s", rp.Case, sum.Case)
	check(rp.PlanID == sum.PlanID && rp.PlanDigest == sum.PlanDigest, "it executed plan %s %s, not %s %s", rp.PlanID, short(rp.PlanDigest), sum.PlanID, short(sum.PlanDigest))
	check(rp.PolicyDigest == sum.PolicyDigest, "policy digest mismatch: it ran under policy %s, the bundle's %s has %s", short(rp.PolicyDigest), policyFile, short(sum.PolicyDigest))
	check(rp.RevertOf == sum.RevertOf, "it reverts %q, the case %q", rp.RevertOf, sum.RevertOf)
	if planOK {
		check(rp.Kind == plan.Kind && rp.Target == plan.Target, "it changed %s, the plan %s", rp.Target, plan.Target)
		check(rp.Before.Digest == plan.BeforeStateDigest, "its before-state %s is not the plan's %s", short(rp.Before.Digest), short(plan.BeforeStateDigest))
		if ad, err := change.ActionDigest(plan, rp.PolicyDigest); err != nil || ad != rp.ActionDigest {
			bad = append(bad, fmt.Sprintf("its action digest %s is not the one recomputed from the plan and its policy digest, %s", short(rp.ActionDigest), short(ad)))
		}
	}
	// The approvals it consumed must be in the bundle, verified, and be
	// what it says they are.
	var gas []change.GateApproval
	for _, a := range rp.Approvals {
		s, ok := apvs[a.ID]
		if !ok {
			bad = append(bad, fmt.Sprintf("it consumed approval %s, which is not in the bundle or did not verify", a.ID))
			continue
		}
		check(a.Approver == s.Approver && a.SubjectDigest == s.SubjectDigest, "it records approval %s as %s over %s, the approval says %s over %s",
			a.ID, a.Approver, short(a.SubjectDigest), s.Approver, short(s.SubjectDigest))
		for _, l := range sum.Approvals {
			if l.ID == a.ID {
				check(l.KeyID == a.KeyID, "it records approval %s under key %s, the approval is signed with %s", a.ID, a.KeyID, l.KeyID)
			}
		}
		gas = append(gas, change.GateApproval{ID: a.ID, Approver: s.Approver, Decision: s.Decision, SignatureValid: true, KeyRegistered: true,
			ExpiresAt: s.ExpiresAt, SubjectDigest: s.SubjectDigest, PolicyDigest: s.PolicyDigest})
	}
	if rp.Preapproved {
		check(sum.RevertOf != "" && sum.Preapproved, "it claims a pre-approval, but the case is not a pre-approved compensating rollback")
		if polOK {
			check(pol.RollbackPreapproved(rp.Kind), "it claims a pre-approval, but %s does not pre-approve rollbacks of %s", policyFile, rp.Kind)
		}
	}
	// The health results decide the outcome.
	rf.HealthPassed, rf.Probes = rp.Health.Passed, len(rp.Health.Probes)
	var firstBad *receiptProbe
	for i, p := range rp.Health.Probes {
		if p.OK {
			rf.ProbesOK++
		} else if firstBad == nil {
			firstBad = &rp.Health.Probes[i]
		}
	}
	check(rp.Health.Passed == (rf.Probes > 0 && firstBad == nil), "its health check says passed=%v, but %d of %d probe(s) passed", rp.Health.Passed, rf.ProbesOK, rf.Probes)
	switch rp.Outcome {
	case outcomeExecuted:
		check(rp.Health.Passed && rp.ApplyError == "", "outcome executed, but the health check did not pass")
	case outcomeRolledBack:
		check(!rp.Health.Passed && rp.Restored != nil, "outcome rolled_back needs a failed health check and a restored state")
	case outcomeRestoreFailed:
		check(!rp.Health.Passed && rp.RestoreError != "", "outcome restore_failed needs a failed health check and a restore error")
	case outcomeDrifted:
		check(!rp.Health.Passed && rp.ApplyError != "" && rp.Restored == nil, "outcome drifted needs a refused apply and nothing restored")
	case outcomeInterrupted:
		check(!rp.Health.Passed && rp.Detail != "", "outcome interrupted needs a failed health check and what the watchdog found")
	default:
		bad = append(bad, fmt.Sprintf("unknown outcome %q", rp.Outcome))
	}
	switch {
	case rp.Health.Passed:
		rf.Health = fmt.Sprintf("passed: %d probe(s), all ok", rf.Probes)
	case firstBad != nil:
		rf.Health = fmt.Sprintf("failed at probe %d of %d (%s): status %d, %s", rf.ProbesOK+1, rf.Probes, firstBad.At.UTC().Format(time.RFC3339), firstBad.Status, oneLine(firstBad.Detail))
	default:
		rf.Health = "failed: no probe was made"
	}
	if len(bad) > 0 {
		f.add(item, StatusFailed, "%s", strings.Join(bad, "; "))
		return rf
	}

	// The gate, replayed on what the receipt recorded and the bundle
	// carries: approvers, quorum, expiry, plan digest, policy digest,
	// before-state and window. The lock and consumption are the server's.
	if planOK && polOK {
		in := change.GateInput{CaseID: sum.Case, PlanID: sum.PlanID, Plan: plan, ApprovedDigest: rp.PlanDigest, Approvals: gas,
			Quorum: pol.Quorum(), Proposer: sum.Proposer, Opener: sum.Opener, PolicyDigest: pol.Digest(), ApprovedPolicyDigest: rp.PolicyDigest,
			LiveBeforeState: rp.Before.Digest, TargetAllowed: pol.AllowsNow(plan.Target, rp.StartedAt) == nil, LockedTarget: plan.Target,
			Now: rp.StartedAt, Preapproved: rp.Preapproved}
		if err := change.Check(in); err != nil {
			f.add(item, StatusFailed, "the gate's checks, replayed on what it recorded, refuse: %v", err)
			return rf
		}
	} else {
		f.add(item, StatusFailed, "the gate's checks cannot be replayed without a verified plan and policy")
		return rf
	}
	status := StatusOK
	if len(cc.keysToUse) == 0 {
		status = StatusUnchecked // well formed and consistent, but nobody's signature was checked
	} else {
		rf.Verified = true
	}
	how := fmt.Sprintf("approvals %s", strings.Join(rf.Approvals, ", "))
	if rp.Preapproved {
		how = "pre-approved rollback"
	}
	f.add(item, status, "%s %s: %s %s by %s (%s); %s; the gate's checks hold on what it recorded",
		r.Kind, rp.Outcome, rp.Kind, rp.Target, rp.Executor, how, signedBy)
	if rp.Health.Passed {
		f.add(item+" health", StatusOK, "%s (as the server recorded them)", rf.Health)
	} else {
		f.add(item+" health", StatusOK, "%s (as the server recorded it); outcome %s", rf.Health, rp.Outcome)
	}
	return rf
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// isChangeBundle reports whether a bundle's files are a change bundle's.
func isChangeBundle(files map[string]bool) bool {
	return files[changeFile] || (files[caseFile] && !files[verdictFile])
}
