package evidence

import (
	"encoding/json"
	"fmt"

	"github.com/signoff-dev/signoff/verify"
)

// StatementType is the in-toto Statement v1 type.
const StatementType = "https://in-toto.io/Statement/v1"

// Predicate types of the statements in a bundle.
const (
	PredicateRun     = "https://signoff.dev/verify/run/v1"
	PredicateVerdict = "https://signoff.dev/verify/verdict/v1"
)

// EvidenceLive is the evidence type of a run executed here (SPEC
// principle 7); a bundle never upgrades it.
const EvidenceLive = "live"

// Statement is an in-toto Statement v1.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject names one bundle file and its digest.
type Subject struct {
	Name   string    `json:"name"`
	Digest DigestSet `json:"digest"`
}

// DigestSet holds a subject's digests; only SHA-256 is used.
type DigestSet struct {
	SHA256 string `json:"sha256"`
}

// RunPredicate records one sandboxed run of the harness, on base or on the
// candidate. Stdout and Stderr name the bundle files holding its raw
// output, which are also subjects of the statement.
type RunPredicate struct {
	EvidenceType  string               `json:"evidence_type"`
	Stage         string               `json:"stage"`
	Run           int                  `json:"run"`
	Commit        string               `json:"commit"`
	HarnessDigest string               `json:"harness_digest"`
	RunnerDigest  string               `json:"runner_digest"`
	Fingerprint   string               `json:"fingerprint"`
	Outcome       string               `json:"outcome"`
	Detail        string               `json:"detail"`
	DurationMS    int64                `json:"duration_ms"`
	Runner        *verify.RunSummary   `json:"runner"`
	Tests         []verify.TestOutcome `json:"tests"`
	Stdout        string               `json:"stdout"`
	Stderr        string               `json:"stderr"`
	// Witness is the witness check of a candidate run.
	Witness *verify.WitnessCheck `json:"witness,omitempty"`
	// Reused is when a base run reused from the verifier's base-run
	// cache really ran (RFC 3339); empty for a run made for this
	// verification.
	Reused string `json:"reused,omitempty"`
}

// VerdictPredicate records the whole verification: the report, whose
// fingerprint and verdict VerifyBundle recomputes. SignerKeyID names the
// key that signed the bundle; SelfSigned says it was generated for this
// bundle alone, so nobody vouches for it.
type VerdictPredicate struct {
	EvidenceType string        `json:"evidence_type"`
	SignerKeyID  string        `json:"signer_keyid"`
	SelfSigned   bool          `json:"self_signed"`
	Report       verify.Report `json:"report"`
}

func newStatement(predicateType string, subjects []Subject, predicate any) ([]byte, error) {
	p, err := json.Marshal(predicate)
	if err != nil {
		return nil, fmt.Errorf("statement predicate: %w", err)
	}
	return json.MarshalIndent(Statement{Type: StatementType, Subject: subjects, PredicateType: predicateType, Predicate: p}, "", "  ")
}
