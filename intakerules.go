package signoff

import "github.com/signoff-dev/signoff/airlock"

// Dossier is reporter text once through the airlock: what agents and
// models may read of it.
type Dossier = airlock.Dossier

// IntakeRules decide what hostile text becomes before the store keeps it:
// a public report, a reporter's answer, the clarification an agent asks a
// reporter. The store holds no rule of its own; it is given these at New
// and refuses to open without them, so no path stores text the rules have
// not seen. The intake package implements them.
type IntakeRules interface {
	// Report checks and sanitizes a public report: the dossier of its
	// text and the sanitized metadata fields (device, os, app_version,
	// steps). EINVALID for an empty, oversized or malformed field.
	Report(in ReportInput) (Dossier, map[string]string, error)
	// Answer checks and sanitizes a reporter's answer.
	Answer(text string) (Dossier, error)
	// Question checks an agent-written clarification before it is shown
	// to the reporter; EINVALID when it may not be shown.
	Question(q, lang string) (Dossier, error)
}
