package evidence

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/verify"
)

// A bundle is a directory, so each piece can be read (and tampered with)
// on its own:
//
//	harness.json                       the harness file exactly as given
//	tests/<path>                       each harness test file as it is at tests_from
//	outputs/<stage>-<n>.stdout|.stderr the raw output of each run
//	statements/<stage>-<n>.dsse.json   one signed statement per run (base, candidate)
//	statements/verdict.dsse.json       the signed verdict, whose subjects are
//	                                   the harness, its test files and every
//	                                   run statement
//	signer.pub                         the public key that signed (PEM); it
//	                                   proves nothing by itself
//
// Every file except signer.pub and the verdict statement is the subject of
// a signed statement, by SHA-256.
const (
	harnessFile   = "harness.json"
	testsDir      = "tests"
	outputsDir    = "outputs"
	statementsDir = "statements"
	verdictFile   = "statements/verdict.dsse.json"
	signerFile    = "signer.pub"
)

// WriteBundle writes the evidence of report r into dir, which must not
// exist or be empty. harness is the harness file as given. The statements
// are signed with key; selfSigned records that key was generated for this
// bundle alone (nobody vouches for it).
func WriteBundle(dir string, r verify.Report, harness []byte, key ed25519.PrivateKey, selfSigned bool) error {
	if len(harness) == 0 {
		return errors.New("evidence: no harness file")
	}
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("evidence: no signing key")
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

	common := []Subject{w.file(harnessFile, harness)}
	for _, p := range sortedKeys(r.TestFiles) {
		if err := verify.CheckPath(p); err != nil {
			return fmt.Errorf("evidence: test file: %w", err)
		}
		common = append(common, w.file(testsDir+"/"+p, r.TestFiles[p]))
	}
	verdictSubjects := slices.Clone(common)
	for _, s := range r.Stages {
		if s.Run == 0 || s.Runner == nil {
			continue
		}
		name := fmt.Sprintf("%s-%d", s.Name, s.Run)
		stdout := w.file(outputsDir+"/"+name+".stdout", s.Stdout)
		stderr := w.file(outputsDir+"/"+name+".stderr", s.Stderr)
		commit := r.Candidate
		if s.Name == verify.StageBase {
			commit = r.Base
		}
		pred := RunPredicate{
			EvidenceType: EvidenceLive, Stage: s.Name, Run: s.Run, Commit: commit,
			HarnessDigest: r.HarnessDigest, RunnerDigest: r.RunnerDigest, Fingerprint: r.Fingerprint,
			Outcome: s.Outcome, Detail: s.Detail, DurationMS: s.DurationMS, Runner: s.Runner, Tests: s.Tests,
			Stdout: stdout.Name, Stderr: stderr.Name, Witness: s.Witness, Reused: s.Reused,
		}
		subjects := append(slices.Clone(common), stdout, stderr)
		verdictSubjects = append(verdictSubjects, w.statement(statementsDir+"/"+name+".dsse.json", PredicateRun, subjects, pred, key))
	}
	pub := key.Public().(ed25519.PublicKey)
	w.statement(verdictFile, PredicateVerdict, verdictSubjects,
		VerdictPredicate{EvidenceType: EvidenceLive, SignerKeyID: keys.ID(pub), SelfSigned: selfSigned, Report: r}, key)
	if pemPub, err := keys.EncodePublic(pub); err != nil {
		w.fail(err)
	} else {
		w.file(signerFile, pemPub)
	}
	if w.err != nil {
		return fmt.Errorf("evidence: write bundle %s: %w", dir, w.err)
	}
	return nil
}

// writer writes bundle files and keeps the first error.
type writer struct {
	root *os.Root
	err  error
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *writer) file(name string, b []byte) Subject {
	if w.err == nil {
		if d := path.Dir(name); d != "." {
			w.fail(w.root.MkdirAll(d, 0o755))
		}
		w.fail(w.root.WriteFile(name, b, 0o644))
	}
	return Subject{Name: name, Digest: DigestSet{SHA256: verify.SHA256(b)}}
}

func (w *writer) statement(name, predicateType string, subjects []Subject, predicate any, key ed25519.PrivateKey) Subject {
	payload, err := newStatement(predicateType, subjects, predicate)
	if err != nil {
		w.fail(err)
		return Subject{}
	}
	b, err := encodeEnvelope(Sign(PayloadType, payload, key))
	if err != nil {
		w.fail(err)
		return Subject{}
	}
	return w.file(name, b)
}

// encodeEnvelope is the one byte form of an envelope file. VerifyBundle
// insists on it, so that no byte of a statement file can change, not even
// whitespace, without the check failing.
func encodeEnvelope(env Envelope) ([]byte, error) {
	b, err := json.MarshalIndent(env, "", "  ")
	return append(b, '\n'), err
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Finding statuses.
const (
	StatusOK        = "ok"
	StatusFailed    = "FAILED"
	StatusUnchecked = "UNCHECKED"
)

// Finding is one thing VerifyBundle checked, or could not check.
type Finding struct {
	Item   string `json:"item"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Findings is everything VerifyBundle found, in the order it checked.
type Findings struct {
	// Kind is the bundle's kind: KindVerification or KindChange.
	Kind  string    `json:"kind,omitempty"`
	Items []Finding `json:"items"`
	// Verdict and Fingerprint are as recorded in the verdict statement.
	Verdict     string `json:"verdict,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Change is what a change bundle shows (change.go).
	Change *ChangeFindings `json:"change,omitempty"`
}

// OK reports whether nothing failed. Unchecked items do not fail a bundle,
// but they are listed, and a bundle with no trusted key is never called
// authentic.
func (f Findings) OK() bool { return len(f.With(StatusFailed)) == 0 }

// With returns the findings with the given status.
func (f Findings) With(status string) []Finding {
	var out []Finding
	for _, it := range f.Items {
		if it.Status == status {
			out = append(out, it)
		}
	}
	return out
}

// String renders one finding per line.
func (f Findings) String() string {
	var b strings.Builder
	for _, it := range f.Items {
		fmt.Fprintf(&b, "%-9s  %s: %s\n", it.Status, it.Item, it.Detail)
	}
	return b.String()
}

func (f *Findings) add(item, status, format string, args ...any) {
	f.Items = append(f.Items, Finding{Item: item, Status: status, Detail: fmt.Sprintf(format, args...)})
}

// parsed is one statement file after its checks.
type parsed struct {
	file      string
	statement Statement
	ok        bool // decoded and signed; its subjects and predicate are usable
}

// VerifyBundle checks a bundle offline: every signature (under the trusted
// keys, or, when none are given, under the bundle's own key, which
// establishes integrity but not authenticity), every subject digest, and
// that every file is covered by a statement. For a verification bundle it
// then recomputes the harness digest from harness.json and the test files,
// the fingerprint from the recorded identity and the verdict from the
// recorded stages, and checks that the run statements agree with the
// verdict; for a change bundle it does what checkChange says. Findings.Kind
// says which it was. The error is for a bundle that cannot be opened at
// all; everything else is a finding.
func VerifyBundle(dir string, trusted []ed25519.PublicKey) (Findings, error) {
	var f Findings
	root, err := os.OpenRoot(dir)
	if err != nil {
		return f, fmt.Errorf("evidence: open bundle: %w", err)
	}
	defer root.Close()

	files := map[string]bool{}
	var statementFiles []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			f.add(p, StatusFailed, "cannot read: %v", err)
			return nil
		}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			files[p] = true
			if strings.HasPrefix(p, statementsDir+"/") && strings.HasSuffix(p, ".dsse.json") {
				statementFiles = append(statementFiles, p)
			}
		default:
			f.add(p, StatusFailed, "not a regular file (%v)", d.Type())
		}
		return nil
	})
	if err != nil {
		return f, fmt.Errorf("evidence: walk bundle: %w", err)
	}

	// Keys.
	keysToUse := trusted
	selfSigned := len(trusted) == 0
	var bundleKey ed25519.PublicKey
	if b, err := root.ReadFile(signerFile); err == nil {
		bundleKey, err = parsePublicPEM(b)
		if err != nil {
			f.add(signerFile, StatusFailed, "%v", err)
		} else if enc, _ := keys.EncodePublic(bundleKey); !bytes.Equal(enc, b) {
			f.add(signerFile, StatusFailed, "not in the form signoff writes")
			bundleKey = nil
		}
	}
	if selfSigned {
		if bundleKey == nil {
			f.add("signatures", StatusUnchecked, "no trusted key given and the bundle carries no usable key: signatures not verified")
		} else {
			keysToUse = []ed25519.PublicKey{bundleKey}
			f.add("signatures", StatusUnchecked, "no trusted key given: signatures are checked against the bundle's own key %s, which proves integrity only; self-signed: authenticity not established (pass --key with the signer's public key)", keys.ID(bundleKey))
		}
	}

	// Statements: envelope, signature, statement shape.
	stmts := map[string]*parsed{}
	for _, file := range statementFiles {
		p := &parsed{file: file}
		stmts[file] = p
		b, err := root.ReadFile(file)
		if err != nil {
			f.add(file, StatusFailed, "cannot read: %v", err)
			continue
		}
		env, payload, err := DecodeEnvelope(b)
		if err != nil {
			f.add(file, StatusFailed, "%v", err)
			continue
		}
		if want, err := encodeEnvelope(env); err != nil || !bytes.Equal(want, b) {
			f.add(file, StatusFailed, "not in the form signoff writes (bytes were changed outside the signed payload)")
			continue
		}
		if env.PayloadType != PayloadType {
			f.add(file, StatusFailed, "payload type %q, want %q", env.PayloadType, PayloadType)
			continue
		}
		signedBy := ""
		if len(keysToUse) > 0 {
			k, err := env.Verify(payload, keysToUse)
			if err != nil {
				f.add(file, StatusFailed, "signature: %v", err)
				continue
			}
			signedBy = keys.ID(k)
		}
		if err := strictUnmarshal(payload, &p.statement); err != nil {
			f.add(file, StatusFailed, "statement: %v", err)
			continue
		}
		if err := checkStatement(p.statement); err != nil {
			f.add(file, StatusFailed, "statement: %v", err)
			continue
		}
		p.ok = true
		switch {
		case signedBy == "":
			f.add(file, StatusUnchecked, "statement well formed; signature not verified")
		case selfSigned:
			f.add(file, StatusOK, "signature verifies under the bundle's own key %s (not a trusted key)", signedBy)
		default:
			f.add(file, StatusOK, "signature verifies under trusted key %s", signedBy)
		}
	}

	// Subjects: every digest, and every file covered.
	refs := map[string][]string{} // file -> statements naming it
	for _, file := range statementFiles {
		p := stmts[file]
		if !p.ok {
			continue
		}
		for _, s := range p.statement.Subject {
			refs[s.Name] = append(refs[s.Name], file)
		}
	}
	digests := map[string]string{}
	for _, name := range sortedKeys(refs) {
		if err := verify.CheckPath(name); err != nil {
			f.add(name, StatusFailed, "subject name: %v", err)
			continue
		}
		b, err := root.ReadFile(name)
		if err != nil {
			f.add(name, StatusFailed, "named by %s but cannot be read: %v", strings.Join(refs[name], ", "), err)
			continue
		}
		got := verify.SHA256(b)
		digests[name] = got
		var bad []string
		for _, file := range refs[name] {
			for _, s := range stmts[file].statement.Subject {
				if s.Name == name && s.Digest.SHA256 != got {
					bad = append(bad, fmt.Sprintf("%s records %s", file, short(s.Digest.SHA256)))
				}
			}
		}
		if len(bad) > 0 {
			f.add(name, StatusFailed, "sha256 mismatch: the file has %s but %s", short(got), strings.Join(bad, ", "))
		} else {
			f.add(name, StatusOK, "sha256 %s matches %d statement(s)", short(got), len(refs[name]))
		}
	}
	for _, name := range sortedKeys(files) {
		if name == signerFile || name == verdictFile || name == changeFile || len(refs[name]) > 0 {
			continue
		}
		if p := stmts[name]; p != nil && !p.ok {
			continue // already reported
		}
		f.add(name, StatusFailed, "not covered by any verified statement")
	}

	switch {
	case files[changeFile] && files[verdictFile]:
		f.add("kind", StatusFailed, "the bundle has both %s and %s: it is neither a verification nor a change bundle", verdictFile, changeFile)
	case isChangeBundle(files):
		checkChange(&f, root, stmts, digests, files, bundleKey, keysToUse, selfSigned)
	default:
		f.Kind = KindVerification
		checkVerdict(&f, root, stmts, digests, bundleKey)
		f.add("runs", StatusUnchecked, "not re-executed: the test outcomes are as the signer's verifier recorded them")
	}
	return f, nil
}

func checkStatement(s Statement) error {
	switch {
	case s.Type != StatementType:
		return fmt.Errorf("_type %q, want %q", s.Type, StatementType)
	case s.PredicateType != PredicateRun && s.PredicateType != PredicateVerdict && s.PredicateType != PredicateChange:
		return fmt.Errorf("unknown predicateType %q", s.PredicateType)
	case len(s.Subject) == 0:
		return errors.New("no subjects")
	}
	for _, sub := range s.Subject {
		if len(sub.Digest.SHA256) != 64 {
			return fmt.Errorf("subject %q has no sha256 digest", sub.Name)
		}
	}
	return nil
}

// checkVerdict recomputes what the verdict statement claims and compares
// the run statements with it.
func checkVerdict(f *Findings, root *os.Root, stmts map[string]*parsed, digests map[string]string, bundleKey ed25519.PublicKey) {
	v := stmts[verdictFile]
	if v == nil {
		f.add(verdictFile, StatusFailed, "missing: the bundle has no verdict")
		return
	}
	if !v.ok {
		f.add("verdict", StatusFailed, "the verdict statement did not verify, so nothing it records can be checked")
		return
	}
	if v.statement.PredicateType != PredicateVerdict {
		f.add(verdictFile, StatusFailed, "predicateType %q, want %q", v.statement.PredicateType, PredicateVerdict)
		return
	}
	var vp VerdictPredicate
	if err := strictUnmarshal(v.statement.Predicate, &vp); err != nil {
		f.add(verdictFile, StatusFailed, "predicate: %v", err)
		return
	}
	r := vp.Report
	f.Verdict, f.Fingerprint = r.Verdict, r.Fingerprint
	if vp.EvidenceType != EvidenceLive {
		f.add("evidence type", StatusFailed, "%q, want %q", vp.EvidenceType, EvidenceLive)
	}
	named := map[string]bool{}
	for _, s := range v.statement.Subject {
		named[s.Name] = true
	}

	// Harness digest, recomputed from harness.json and tests/.
	if !named[harnessFile] {
		f.add("harness digest", StatusFailed, "the verdict does not name %s", harnessFile)
	} else if raw, err := root.ReadFile(harnessFile); err != nil {
		f.add("harness digest", StatusFailed, "%v", err)
	} else if h, err := verify.ParseHarness(raw); err != nil {
		f.add("harness digest", StatusFailed, "%s: %v", harnessFile, err)
	} else {
		tf := map[string][]byte{}
		var ferr error
		for _, p := range h.TestFiles {
			name := testsDir + "/" + p
			b, err := root.ReadFile(name)
			if err == nil && !named[name] {
				err = errors.New("not named by the verdict")
			}
			if err != nil && ferr == nil {
				ferr = fmt.Errorf("%s: %w", name, err)
			}
			tf[p] = b
		}
		switch d, err := verify.DigestHarness(h, tf); {
		case ferr != nil:
			f.add("harness digest", StatusFailed, "%v", ferr)
		case err != nil:
			f.add("harness digest", StatusFailed, "%v", err)
		case d != r.HarnessDigest:
			f.add("harness digest", StatusFailed, "recomputed %s from harness.json and tests/, the verdict records %s", short(d), short(r.HarnessDigest))
		default:
			f.add("harness digest", StatusOK, "recomputed %s from harness.json and %d test file(s)", short(d), len(tf))
		}
		if h.Base != r.Base {
			f.add("base", StatusFailed, "the harness names base %s, the verdict %s", h.Base, r.Base)
		}
		checkDefences(f, h, r)
	}

	// Fingerprint and verdict.
	if fp, err := verify.Fingerprint(r.Identity()); err != nil || fp != r.Fingerprint {
		f.add("fingerprint", StatusFailed, "recomputed %s from the recorded identity, the verdict records %s", short(fp), short(r.Fingerprint))
	} else {
		f.add("fingerprint", StatusOK, "recomputed %s over base, candidate, harness digest, runner digest and environment", short(fp))
	}
	if d := verify.Decide(r.Stages); d != r.Verdict {
		f.add("verdict", StatusFailed, "the recorded stages give %s, the verdict records %s", d, r.Verdict)
	} else {
		f.add("verdict", StatusOK, "%s follows from the %d recorded stages", d, len(r.Stages))
	}
	if !r.Environment.Isolated {
		f.add("sandbox", StatusUnchecked, "the runs used sandbox %q without isolation", r.Environment.Sandbox)
	}
	if bundleKey != nil && keys.ID(bundleKey) != vp.SignerKeyID {
		f.add(signerFile, StatusFailed, "holds key %s, the verdict names signer %s", keys.ID(bundleKey), vp.SignerKeyID)
	}
	if vp.SelfSigned {
		f.add("signer", StatusUnchecked, "the signing key %s was generated for this bundle: self-signed, authenticity not established unless you trust that key", vp.SignerKeyID)
	}

	// Run statements against the verdict's stages.
	want := map[string]verify.Stage{}
	for _, s := range r.Stages {
		if s.Run > 0 && s.Runner != nil {
			want[fmt.Sprintf("%s/%s-%d.dsse.json", statementsDir, s.Name, s.Run)] = s
		}
	}
	for _, file := range sortedKeys(stmts) {
		if file == verdictFile {
			continue
		}
		if _, ok := want[file]; !ok {
			f.add(file, StatusFailed, "no stage of the verdict corresponds to this statement")
		}
	}
	for _, file := range sortedKeys(want) {
		s := want[file]
		p := stmts[file]
		item := fmt.Sprintf("%s run %d", s.Name, s.Run)
		switch {
		case p == nil:
			f.add(item, StatusFailed, "the verdict records this run but %s is missing", file)
			continue
		case !p.ok:
			f.add(item, StatusFailed, "%s did not verify", file)
			continue
		case !named[file]:
			f.add(item, StatusFailed, "the verdict does not name %s", file)
			continue
		case p.statement.PredicateType != PredicateRun:
			f.add(item, StatusFailed, "%s has predicateType %q", file, p.statement.PredicateType)
			continue
		}
		var rp RunPredicate
		if err := strictUnmarshal(p.statement.Predicate, &rp); err != nil {
			f.add(item, StatusFailed, "%s predicate: %v", file, err)
			continue
		}
		commit := r.Candidate
		if s.Name == verify.StageBase {
			commit = r.Base
		}
		var bad []string
		check := func(what string, ok bool) {
			if !ok {
				bad = append(bad, what)
			}
		}
		check("stage", rp.Stage == s.Name && rp.Run == s.Run)
		check("commit", rp.Commit == commit)
		check("harness digest", rp.HarnessDigest == r.HarnessDigest)
		check("runner digest", rp.RunnerDigest == r.RunnerDigest)
		check("fingerprint", rp.Fingerprint == r.Fingerprint)
		check("outcome", rp.Outcome == s.Outcome && rp.Detail == s.Detail)
		check("evidence type", rp.EvidenceType == EvidenceLive)
		check("runner summary", rp.Runner != nil && s.Runner != nil && *rp.Runner == *s.Runner)
		check("witness", reflect.DeepEqual(rp.Witness, s.Witness))
		check("reused", rp.Reused == s.Reused)
		subjects := map[string]string{}
		for _, sub := range p.statement.Subject {
			subjects[sub.Name] = sub.Digest.SHA256
		}
		check("stdout digest", rp.Runner != nil && subjects[rp.Stdout] != "" && digests[rp.Stdout] == rp.Runner.StdoutSHA256)
		check("stderr digest", rp.Runner != nil && subjects[rp.Stderr] != "" && digests[rp.Stderr] == rp.Runner.StderrSHA256)
		if len(bad) > 0 {
			f.add(item, StatusFailed, "%s disagrees with the verdict or its outputs: %s", file, strings.Join(bad, ", "))
		} else {
			f.add(item, StatusOK, "%s: %s, consistent with the verdict and its outputs", file, s.Outcome)
			if s.Reused != "" {
				// Signed as it ran, but not for this candidate: say so.
				f.add(item, StatusUnchecked, "%s: reused from a base run at %s (same base, harness, runner and environment), not run for this candidate", file, s.Reused)
			}
		}
	}
}

// checkDefences checks what the report says about the defences against a
// counterfeit verdict: the frozen test tree it names is the harness's, no
// finding that refuses stands behind a VERIFIED verdict, and every
// candidate run of a VERIFIED verdict carries a witness check with
// nothing missing (or says why the witness was not applied).
func checkDefences(f *Findings, h verify.Harness, r verify.Report) {
	switch {
	case r.Protected == nil && r.BuildChanges == "":
		f.add("frozen test tree", StatusUnchecked, "the report predates the frozen test tree: only the harness's own test files were restored")
		return
	case !slices.Equal(r.Protected, h.ProtectedGlobs()):
		f.add("frozen test tree", StatusFailed, "the report restored %v, the harness protects %v", r.Protected, h.ProtectedGlobs())
	case r.BuildChanges != h.BuildPolicy():
		f.add("frozen test tree", StatusFailed, "the report applied build-change policy %q, the harness says %q", r.BuildChanges, h.BuildPolicy())
	default:
		f.add("frozen test tree", StatusOK, "%d protected glob(s) restored from tests_from, %d candidate edit(s) to them discarded, %d default(s) exempted", len(r.Protected), len(r.TestEdits), len(r.Unprotected))
	}
	refusing, _ := verify.CheckFindings(r.Findings, r.BuildChanges)
	switch {
	case refusing == verify.Refused && r.Verdict == verify.Verified:
		f.add("static checks", StatusFailed, "the report is VERIFIED but its own findings refuse the candidate")
	default:
		f.add("static checks", StatusOK, "%d finding(s) recorded, consistent with the verdict", len(r.Findings))
	}
	if r.Verdict != verify.Verified {
		return
	}
	for _, s := range r.Stages {
		if s.Name != verify.StageCandidate || s.Run == 0 {
			continue
		}
		item := fmt.Sprintf("witness of candidate run %d", s.Run)
		switch w := s.Witness; {
		case w == nil:
			f.add(item, StatusUnchecked, "no witness check recorded")
		case !w.Applied:
			f.add(item, StatusUnchecked, "the witness was %s", w.Reason)
		case len(w.Missing) > 0 || w.Checked == 0:
			f.add(item, StatusFailed, "VERIFIED with %d of %d harness results unwitnessed", len(w.Missing), w.Checked)
		default:
			f.add(item, StatusOK, "%d harness result(s) carried the witness of their pass", w.Checked)
		}
	}
}

// parsePublicPEM reads signer.pub: one PEM public key block, Ed25519.
func parsePublicPEM(b []byte) (ed25519.PublicKey, error) {
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" || len(strings.TrimSpace(string(rest))) > 0 {
		return nil, errors.New("not a single PEM public key")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	return pub, nil
}

func short(d string) string {
	if len(d) > 16 {
		return d[:16]
	}
	if d == "" {
		return "(none)"
	}
	return d
}
