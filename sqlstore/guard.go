package sqlstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// Size limits of the agent services, in bytes unless said otherwise.
const (
	maxTaskJSON     = 256 << 10 // task input and output
	maxCallJSON     = 1 << 20   // a call's request and its response, each
	maxMessageBody  = 16 << 10
	maxSettingValue = 64 << 10
	maxSubjectJSON  = 256 << 10
	maxReason       = 2 << 10
	maxCallError    = 2 << 10
	maxClientRunes  = 100
)

// The ids the ledger gives the server and the CLI (signoff.SystemActor,
// signoff.CLIActor). Real actors' ids carry the act_ prefix, so neither can
// be taken by one.
var (
	systemActorID = signoff.SystemActor("").ID
	cliActorID    = signoff.CLIActor("").ID
)

// isServer reports whether by is the server itself or the CLI with
// database access.
func isServer(by signoff.Actor) bool {
	return by.Role == signoff.RoleSystem || by.ID == cliActorID
}

// canIssue reports whether by may open, refresh and withdraw tasks: people
// who run the desk (owner, operator; the CLI acts as an owner) and the
// server.
func canIssue(by signoff.Actor) bool {
	return by.Role == signoff.RoleOwner || by.Role == signoff.RoleOperator || by.Role == signoff.RoleSystem
}

// isStaff reports whether by reads everything of the workspace.
func isStaff(by signoff.Actor) bool {
	return by.Role == signoff.RoleOwner || by.Role == signoff.RoleOperator || by.Role == signoff.RoleViewer || by.Role == signoff.RoleSystem
}

var tokenRE = regexp.MustCompile(`^[a-z0-9_.-]{1,64}$`)

// checkToken returns EINVALID unless s is a short lower-case token.
func checkToken(what, s string) error {
	if !tokenRE.MatchString(s) {
		return signoff.Errorf(signoff.EINVALID, "%s must be 1 to 64 of a-z, 0-9, '_', '.', '-'", what)
	}
	return nil
}

var digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkDigest returns EINVALID unless s is a lower-case hex SHA-256.
func checkDigest(what, s string) error {
	if !digestRE.MatchString(s) {
		return signoff.Errorf(signoff.EINVALID, "%s must be a lower-case hex SHA-256", what)
	}
	return nil
}

// canonicalJSON checks raw is JSON of at most max bytes (an object when
// object is set) and returns its RFC 8785 form and that form's SHA-256.
// Empty raw is def when def is not nil, else EINVALID.
func canonicalJSON(what string, raw json.RawMessage, max int, object bool, def json.RawMessage) ([]byte, string, error) {
	if len(raw) == 0 {
		if def == nil {
			return nil, "", signoff.Errorf(signoff.EINVALID, "%s is required", what)
		}
		raw = def
	}
	if len(raw) > max {
		return nil, "", signoff.Errorf(signoff.EINVALID, "%s is larger than %d bytes", what, max)
	}
	c, err := canonical.Transform(raw)
	if err != nil {
		return nil, "", signoff.Errorf(signoff.EINVALID, "%s is not valid JSON: %v", what, err)
	}
	if object && c[0] != '{' {
		return nil, "", signoff.Errorf(signoff.EINVALID, "%s must be a JSON object", what)
	}
	return c, sha256Hex(c), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkProse returns EINVALID unless s is valid UTF-8 of at most max bytes
// whose only control characters are line breaks and tabs, and, if
// required, not blank.
func checkProse(what, s string, required bool, max int) error {
	switch {
	case !utf8.ValidString(s):
		return signoff.Errorf(signoff.EINVALID, "%s is not valid UTF-8", what)
	case required && strings.TrimSpace(s) == "":
		return signoff.Errorf(signoff.EINVALID, "%s is required", what)
	case len(s) > max:
		return signoff.Errorf(signoff.EINVALID, "%s is longer than %d bytes", what, max)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' }) >= 0:
		return signoff.Errorf(signoff.EINVALID, "%s contains control characters", what)
	}
	return nil
}

// cleanLine makes free text safe to show on one line: valid UTF-8 without
// control or format characters (no bidi overrides), trimmed, at most max
// runes.
func cleanLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		s = strings.TrimSpace(string([]rune(s)[:max]))
	}
	return s
}

// truncateBytes shortens s to at most max bytes on a rune boundary, making
// it valid UTF-8 first.
func truncateBytes(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
