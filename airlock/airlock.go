// Package airlock turns hostile public text into a dossier that agents may
// read: normalized, with invisible characters removed, secrets and personal
// data redacted behind typed placeholders, and suspected instructions
// reported as advisory signals. It is pure: no I/O, no network, no model.
//
// Signals never authorize anything and never block anything by themselves;
// they tell the people and the prompts downstream that a report tried to
// talk to the machine.
package airlock

// Redaction counts what was removed of one kind.
type Redaction struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Redaction kinds, used as the placeholder text "[kind]". Besides these,
// the vendor rule set reports each provider's tokens under the id of the
// gitleaks rule for them ("github-pat", "aws-access-token",
// "stripe-access-token", ...): KindAWSKey is left for AWS secret access
// keys, named by their key, and KindAPIKey for keys no vendor is known for.
const (
	KindEmail          = "email"
	KindPhone          = "phone"
	KindCard           = "card"
	KindIBAN           = "iban"
	KindAWSKey         = "aws-key"
	KindJWT            = "jwt"
	KindPrivateKey     = "private-key"
	KindURLCredentials = "url-credentials"
	KindAPIKey         = "api-key"
	KindPassword       = "password"

	// Deprecated: Redact no longer reports these kinds. GitHub and Slack
	// tokens are reported under the id of their vendor rule
	// ("github-pat", "github-fine-grained-pat", "slack-bot-token",
	// "slack-webhook-url", ...), like every vendor's tokens; dossiers
	// stored before may still carry them.
	KindGitHubToken = "github-token"
	KindSlackToken  = "slack-token"
)

// Dossier is the sanitized form of one piece of reporter text.
type Dossier struct {
	// Text is normalized and redacted: the only form agents ever see.
	Text string `json:"text"`
	// Redactions lists each kind found, in a stable order.
	Redactions []Redaction `json:"redactions"`
	// InstructionSuspected is true when any signal fired.
	InstructionSuspected bool `json:"instruction_suspected"`
	// Signals name the detection families that fired, e.g.
	// "override-instructions", "hidden-comment", "encoded-blob",
	// "invisible-text" (see the Signal constants).
	Signals []string `json:"signals"`
	// RemovedInvisible counts zero-width, bidi and other invisible
	// characters removed.
	RemovedInvisible int `json:"removed_invisible"`
}

// Sanitize runs the whole airlock over text.
func Sanitize(text string) Dossier {
	norm, removed := Normalize(text)
	red, reds := Redact(norm)
	// Normalize removes invisible characters, and with them any text
	// spelled in tag characters or variation selectors: that payload is
	// read from the original text, and only the detector sees it.
	d := loadDetector()
	signals := d.names(d.detect(norm) | d.scanInvisible(text))
	if reds == nil {
		reds = []Redaction{}
	}
	if signals == nil {
		signals = []string{}
	}
	return Dossier{Text: red, Redactions: reds, InstructionSuspected: len(signals) > 0, Signals: signals, RemovedInvisible: removed}
}
