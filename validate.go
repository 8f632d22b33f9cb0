package signoff

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText returns EINVALID unless s is valid UTF-8 without control
// characters, at most max runes long and, if required, not blank.
func CheckText(what, s string, required bool, max int) error {
	switch {
	case !utf8.ValidString(s):
		return Errorf(EINVALID, "%s is not valid UTF-8", what)
	case required && strings.TrimSpace(s) == "":
		return Errorf(EINVALID, "%s is required", what)
	case utf8.RuneCountInString(s) > max:
		return Errorf(EINVALID, "%s is longer than %d characters", what, max)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return Errorf(EINVALID, "%s contains control characters", what)
	}
	return nil
}
