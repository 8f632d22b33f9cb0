package airlock

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// redSpan is a half-open byte range of the text being redacted.
type redSpan struct {
	start, end int
	kind       secretKind
}

// A redactStage appends to spans the matches it finds in text, in order and
// without overlaps.
type redactStage func(text string, spans []redSpan) []redSpan

// redactStages run in priority order: private keys, credentials and tokens
// before the personal data. Each stage sees the text with the placeholders
// of the stages before it already in place, so a secret is replaced whole
// by the most specific detector, and a later one never matches part of it
// or part of a placeholder.
var redactStages = []redactStage{
	findPrivateKeys,
	findURLCredentials,
	findJWTs,
	findVendorTokens,
	findBearerTokens,
	findKeyValues,
	findProsePasswords,
	findEmails,
	findIBANs,
	findPersonal, // before cards and phones: an SSN, a house number and a postcode are no phone number
	findCards,
	findPhones,
}

// maxRedactRounds bounds the rounds of Redact; two suffice unless the text
// is built to make each replacement expose another match.
const maxRedactRounds = 4

// Values shorter than minPropagate are not searched for elsewhere (a
// one-letter password would erase every such letter); values shorter than
// minPropagateAnywhere are replaced elsewhere only as whole words, so that
// "password=test" does not turn "latest" into "la[password]".
const (
	minPropagate         = 4
	minPropagateAnywhere = 8
)

type foundValue struct {
	text string
	kind secretKind
}

// redactor carries the state of one Redact call. Redact takes one from
// redactorPool, so that its buffers serve call after call.
type redactor struct {
	counts []int        // per kind, len(kindNames)
	used   []secretKind // the kinds counted, each once
	found  []foundValue
	seen   map[string]struct{}
	spans  []redSpan
}

var redactorPool = sync.Pool{New: func() any {
	return &redactor{counts: make([]int, len(kindNames)), spans: make([]redSpan, 0, 16)}
}}

// release returns r to the pool without the values it found, which must
// not outlive the call.
func (r *redactor) release() {
	for _, k := range r.used {
		r.counts[k] = 0
	}
	r.used = r.used[:0]
	clear(r.found)
	r.found, r.seen = r.found[:0], nil
	redactorPool.Put(r)
}

// Redact replaces every secret and personal datum in text with a typed
// placeholder such as "[email]" or "[github-pat]" and counts what it
// replaced per kind, in the order of the Kind* constants and then of the
// vendor rule set (kindNames); it returns a nil slice when it found
// nothing.
//
// Detection is deliberately lopsided: secrets (keys, tokens, passwords) are
// matched generously, because a leaked secret cannot be taken back, while
// phone numbers and card numbers must have their real shape (and a card its
// Luhn check digit, an IBAN its mod-97 checksum) so that versions, dates,
// prices and order ids, which triage depends on, survive.
//
// Once a value is found, its other occurrences are replaced too, wherever
// they are, so that the output never contains a value Redact reported.
//
// A replacement changes the neighbourhood of the text around it (a word
// boundary appears where a secret was glued to a word), so Redact runs its
// detectors again until a round finds nothing: its output is a fixed point,
// and Redact of it finds nothing new.
func Redact(text string) (string, []Redaction) {
	r := redactorPool.Get().(*redactor)
	defer r.release()
	spans := r.spans[:0]
	defer func() { r.spans = spans[:0] }()
	// A round's stages after the last one that found something in the
	// round before would read the very text they read then, where they
	// found nothing (propagate also the same values): they are skipped
	// until the round finds something. Stage len(redactStages) is
	// propagate.
	propagateStage := len(redactStages)
	lastPrev := propagateStage
	for round := 0; round < maxRedactRounds; round++ {
		found, last := false, -1
		// References first: a secret the decoded view shows whole is
		// replaced whole before a stage reads part of it as written.
		if spans = r.refSpans(text, spans[:0]); len(spans) > 0 {
			text = r.apply(text, spans, true)
			found = true
		}
		for si, find := range redactStages {
			if !found && si > lastPrev {
				break
			}
			spans = disjoint(find(text, spans[:0]))
			if len(spans) > 0 {
				text = r.apply(text, spans, true)
				found, last = true, si
			}
		}
		if found || lastPrev == propagateStage {
			if spans = r.propagate(text, spans[:0]); len(spans) > 0 {
				text = r.apply(text, spans, false)
				found, last = true, propagateStage
			}
		}
		if !found {
			break
		}
		lastPrev = last
	}
	// The kinds in their order: a few of the hundred-odd there are.
	slices.Sort(r.used)
	var out []Redaction
	for _, k := range r.used {
		out = append(out, Redaction{Kind: kindNames[k], Count: r.counts[k]})
	}
	return text, out
}

// apply replaces spans (sorted, disjoint) with their placeholders.
func (r *redactor) apply(text string, spans []redSpan, remember bool) string {
	size := len(text)
	for _, s := range spans {
		size += len(placeholders[s.kind]) - (s.end - s.start)
	}
	var b strings.Builder
	b.Grow(size)
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s.start])
		b.WriteString(placeholders[s.kind])
		if r.counts[s.kind] == 0 {
			r.used = append(r.used, s.kind)
		}
		r.counts[s.kind]++
		if remember {
			v := text[s.start:s.end]
			r.remember(v, s.kind)
			if s.kind == kURLCredentials {
				// The password alone is as secret as the pair.
				if i := strings.IndexByte(v, ':'); i >= 0 {
					r.remember(v[i+1:], s.kind)
				}
			}
		}
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String()
}

func (r *redactor) remember(v string, k secretKind) {
	if len(v) < minPropagate || k == kPrivateKey {
		return
	}
	// A handful of values is the common case; a map only pays beyond.
	if r.seen == nil && len(r.found) < 16 {
		for _, f := range r.found {
			if f.text == v {
				return
			}
		}
	} else {
		if r.seen == nil {
			r.seen = make(map[string]struct{}, 2*len(r.found))
			for _, f := range r.found {
				r.seen[f.text] = struct{}{}
			}
		}
		if _, ok := r.seen[v]; ok {
			return
		}
		r.seen[v] = struct{}{}
	}
	r.found = append(r.found, foundValue{text: v, kind: k})
}

// maxIndexedValues is how many values propagate looks for one at a time
// with strings.Index (fast, but a pass per value); beyond it, one pass
// looks for all of them, so a report listing thousands of addresses stays
// linear.
const maxIndexedValues = 8

// propagate finds the occurrences of every remembered value still in text.
func (r *redactor) propagate(text string, spans []redSpan) []redSpan {
	if len(r.found) <= maxIndexedValues {
		for _, f := range r.found {
			for off := 0; ; {
				j := strings.Index(text[off:], f.text)
				if j < 0 {
					break
				}
				start := off + j
				off = start + 1
				if s, ok := occurrence(text, start, f); ok {
					spans = append(spans, s)
					off = s.end
				}
			}
		}
	} else {
		spans = r.propagateAll(text, spans)
	}
	if len(spans) < 2 {
		return spans
	}
	// Occurrences of different values may overlap: sort and merge them.
	slices.SortFunc(spans, func(a, b redSpan) int { return a.start - b.start })
	out := spans[:1]
	for _, s := range spans[1:] {
		if last := &out[len(out)-1]; s.start < last.end {
			last.end = max(last.end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// propagateAll finds the occurrences of all remembered values in one pass:
// a position is a candidate when its first four bytes are the first four
// bytes of some value, which a 64 Kibit filter rules out almost always.
func (r *redactor) propagateAll(text string, spans []redSpan) []redSpan {
	var filter [1 << 10]uint64
	byPrefix := make(map[uint32][]int, len(r.found))
	for i, f := range r.found {
		p := prefix4(f.text)
		h := hash16(p)
		filter[h>>6] |= 1 << (h & 63)
		byPrefix[p] = append(byPrefix[p], i)
	}
	for i := 0; i+4 <= len(text); i++ {
		p := prefix4(text[i:])
		if h := hash16(p); filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, k := range byPrefix[p] {
			if f := r.found[k]; strings.HasPrefix(text[i:], f.text) {
				if s, ok := occurrence(text, i, f); ok {
					spans = append(spans, s)
				}
			}
		}
	}
	return spans
}

func prefix4(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func hash16(p uint32) uint32 { return (p * 0x9E3779B1) >> 16 }

// occurrence judges the occurrence of f at start.
func occurrence(text string, start int, f foundValue) (redSpan, bool) {
	s := redSpan{start, start + len(f.text), f.kind}
	// A short value inside a word is a coincidence ("test" in "latest"), and
	// so is a number inside a longer number: replacing it would only chop
	// the longer one into new number-shaped pieces.
	whole := len(f.text) < minPropagateAnywhere || f.kind == kPhone || f.kind == kCard || f.kind == kIBAN
	if whole && (isWordBefore(text, s.start) || isWordAt(text, s.end)) {
		return s, false
	}
	if insidePlaceholder(text, s.start) || insidePlaceholder(text, s.end) {
		return s, false // the value is spelled inside a placeholder: not a leak
	}
	return s, true
}

// insidePlaceholder reports whether position i falls strictly inside a
// placeholder of text.
func insidePlaceholder(text string, i int) bool {
	for p := i - 1; p >= 0 && p > i-maxPlaceholder; p-- {
		switch text[p] {
		case ']':
			return false
		case '[':
			n := placeholderLen(text[p:])
			return n > 0 && p+n > i
		}
	}
	return false
}

// placeholderLen returns the length of the placeholder s starts with, or 0.
func placeholderLen(s string) int {
	if len(s) < 3 || s[0] != '[' {
		return 0
	}
	e := strings.IndexByte(s[1:min(len(s), maxPlaceholder)], ']')
	if e < 1 {
		return 0
	}
	if _, ok := kindIndex[s[1:e+1]]; !ok {
		return 0
	}
	return e + 2
}

// isPlaceholder reports whether s is exactly one placeholder, which a
// key/value redactStage must leave alone: "password: [password]" is already
// redacted.
func isPlaceholder(s string) bool {
	return len(s) > 2 && placeholderLen(s) == len(s)
}

// Byte classes.
const (
	cDigit = 1 << iota
	cUpper
	cLower
	cUnderscore
	cDash
	cSpace // horizontal space: ' ' and '\t'
)

var byteClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] |= cDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= cUpper
		t[c+'a'-'A'] |= cLower
	}
	t['_'] = cUnderscore
	t['-'] = cDash
	t[' '] = cSpace
	t['\t'] = cSpace
	return t
}()

func isASCIIDigit(c byte) bool   { return byteClass[c]&cDigit != 0 }
func isASCIIAlnum(c byte) bool   { return byteClass[c]&(cDigit|cUpper|cLower) != 0 }
func isASCIILetter(c byte) bool  { return byteClass[c]&(cUpper|cLower) != 0 }
func isIdentByte(c byte) bool    { return byteClass[c]&(cDigit|cUpper|cLower|cUnderscore) != 0 }
func isKeyByte(c byte) bool      { return byteClass[c]&(cDigit|cUpper|cLower|cUnderscore|cDash) != 0 }
func isUpperOrDigit(c byte) bool { return byteClass[c]&(cDigit|cUpper) != 0 }
func isHSpace(c byte) bool       { return byteClass[c]&cSpace != 0 }
func isQuoteByte(c byte) bool    { return c == '"' || c == '\'' || c == '`' }

// isWordBefore reports whether the character before i is a letter or digit
// in any script (or an underscore).
func isWordBefore(text string, i int) bool {
	if i <= 0 {
		return false
	}
	if c := text[i-1]; c < utf8.RuneSelf {
		return isIdentByte(c)
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// isWordAt reports whether the character at i is a letter or digit in any
// script (or an underscore).
func isWordAt(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	if c := text[i]; c < utf8.RuneSelf {
		return isIdentByte(c)
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// tokenBoundary reports whether a token may start at i: the byte before it
// cannot continue a token. Only ASCII counts, as in a regexp's \b, so a key
// glued to a non-Latin word is still found.
func tokenBoundary(text string, i int) bool {
	return i == 0 || !isKeyByte(text[i-1])
}

// spanWhile returns the end of the run of bytes from i that satisfy ok.
func spanWhile(text string, i int, ok func(byte) bool) int {
	for i < len(text) && ok(text[i]) {
		i++
	}
	return i
}

// findPrivateKeys finds PEM private key blocks, BEGIN to END. A block with
// no END (a truncated paste) runs to the end of the text: nothing after a
// private key header is safe to show.
func findPrivateKeys(text string, spans []redSpan) []redSpan {
	const begin, end, dashes = "-----BEGIN ", "-----END ", "-----"
	for off := 0; ; {
		j := strings.Index(text[off:], begin)
		if j < 0 {
			return spans
		}
		start := off + j
		p := start + len(begin)
		label, ok := pemLabel(text, p)
		if !ok || !strings.Contains(label, "PRIVATE KEY") {
			off = p
			continue
		}
		q := p + len(label) + len(dashes)
		stop := len(text)
		if e := strings.Index(text[q:], end); e >= 0 {
			e += q + len(end)
			if l, ok := pemLabel(text, e); ok {
				stop = e + len(l) + len(dashes)
			} else if nl := strings.IndexByte(text[e:], '\n'); nl >= 0 {
				stop = e + nl
			}
		}
		spans = append(spans, redSpan{start, stop, kPrivateKey})
		off = stop
	}
}

// pemLabel returns the label of a PEM boundary line that starts at p and
// ends with five dashes on the same line.
func pemLabel(text string, p int) (string, bool) {
	rest := text[p:min(len(text), p+80)]
	k := strings.Index(rest, "-----")
	if k < 0 || strings.IndexByte(rest[:k], '\n') >= 0 {
		return "", false
	}
	return rest[:k], true
}

// findURLCredentials finds the user:password part of URLs such as
// "https://user:pass@host/". Scheme and host stay: they tell triage which
// service was involved. A user name alone ("ssh://git@host") is not a
// secret unless it is long enough to be a token ("https://<token>@host").
func findURLCredentials(text string, spans []redSpan) []redSpan {
	for off := 0; ; {
		j := strings.Index(text[off:], "://")
		if j < 0 {
			return spans
		}
		sep := off + j
		a := sep + 3
		off = a
		if sep == 0 || !isASCIILetter(text[sep-1]) && !isASCIIDigit(text[sep-1]) && text[sep-1] != '+' && text[sep-1] != '.' && text[sep-1] != '-' {
			continue // no scheme
		}
		// The authority ends at the path, query, fragment or any space.
		e, at := a, -1
	authority:
		for ; e < len(text); e++ {
			switch c := text[e]; c {
			case '@':
				at = e
			case '/', '?', '#', '"', '\'', '`', '<', '>', '\\', ' ', '\t', '\n', '\r':
				break authority
			}
		}
		off = e
		if at <= a || at+1 >= e {
			continue // no user information, or no host after it
		}
		user := text[a:at]
		if isPlaceholder(user) || (strings.IndexByte(user, ':') < 0 && len(user) < 16) {
			continue
		}
		spans = append(spans, redSpan{a, at, kURLCredentials})
	}
}

func isBase64URLByte(c byte) bool { return isKeyByte(c) }

// findJWTs finds JSON Web Tokens: base64url segments joined by dots, the
// first one an encoded JSON header ("eyJ" is base64 for `{"`). An unsigned
// token (header.payload.) counts when the payload is JSON too.
func findJWTs(text string, spans []redSpan) []redSpan {
	for off := 2; off < len(text); {
		// Capital J is rare in prose, 'e' is everywhere: look for the J.
		j := strings.IndexByte(text[off:], 'J')
		if j < 0 {
			break
		}
		start := off + j - 2
		off = start + 3
		if text[start] != 'e' || text[start+1] != 'y' || !tokenBoundary(text, start) {
			continue
		}
		e1 := spanWhile(text, start, isBase64URLByte)
		if e1-start < 10 || e1+1 >= len(text) || text[e1] != '.' {
			off = e1
			continue
		}
		e2 := spanWhile(text, e1+1, isBase64URLByte)
		if e2-e1-1 < 8 {
			off = e2
			continue
		}
		end, segs := e2, 2
		for segs < 5 && end+1 < len(text) && text[end] == '.' && isBase64URLByte(text[end+1]) {
			end = spanWhile(text, end+1, isBase64URLByte)
			segs++
		}
		if segs == 2 && !strings.HasPrefix(text[e1+1:], "eyJ") {
			off = end
			continue
		}
		spans = append(spans, redSpan{start, end, kJWT})
		off = end
	}
	return spans
}

func isBearerByte(c byte) bool {
	return isKeyByte(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}

// findBearerTokens finds "Bearer <token>" wherever it appears (curl
// commands, logs), keeping the word and replacing the token. Sixteen
// characters at least, so that "bearer of bad news" is prose.
func findBearerTokens(text string, spans []redSpan) []redSpan {
	// Look from the 'B' or 'b', rarer than the 'e' that starts "earer".
	for _, first := range [...]byte{'B', 'b'} {
		for off := 0; ; {
			j := strings.IndexByte(text[off:], first)
			if j < 0 {
				break
			}
			i := off + j
			off = i + 1
			if !strings.HasPrefix(text[i+1:], "earer") && !strings.HasPrefix(text[i+1:], "EARER") || !tokenBoundary(text, i) {
				continue
			}
			p := i + 6
			t := spanWhile(text, p, isHSpace)
			if t == p {
				continue
			}
			e := spanWhile(text, t, isBearerByte)
			if e-t < 16 {
				continue
			}
			spans = appendSorted(spans, redSpan{t, e, kAPIKey})
			off = e
		}
	}
	return spans
}

// appendSorted inserts s into spans (sorted, disjoint) unless it overlaps.
func appendSorted(spans []redSpan, s redSpan) []redSpan {
	i := len(spans)
	for i > 0 && spans[i-1].start > s.start {
		i--
	}
	if (i > 0 && spans[i-1].end > s.start) || (i < len(spans) && spans[i].start < s.end) {
		return spans
	}
	spans = append(spans, redSpan{})
	copy(spans[i+1:], spans[i:])
	spans[i] = s
	return spans
}

// valueRule says how a key/value redactStage reads and judges the value.
type valueRule uint8

const (
	ruleSecret valueRule = iota // quoted, or up to a space, quote, '&', ';' or ','
	rulePath                    // as ruleSecret, but a path is not a password ("PWD=/home/ci")
	ruleAWS                     // 40 characters: an AWS secret key; anything else: an API key
	ruleAuth                    // an HTTP Authorization value: optional scheme, then the credential
)

// secretKeyword is a key whose value is secret.
type secretKeyword struct {
	word   string // lower case
	kind   secretKind
	rule   valueRule
	min    int  // shortest value redacted, in bytes
	equals bool // only with '=': "pass: 12, fail: 0" is test output
	cjk    bool // needs no word boundary before it
}

// secretKeywords name secrets in key/value form. Password words come in several
// languages because reporters write in theirs.
var secretKeywords = func() []secretKeyword {
	var ks []secretKeyword
	add := func(k secretKind, rule valueRule, min int, words ...string) {
		for _, w := range words {
			first, _ := utf8.DecodeRuneInString(w)
			cjk := unicode.In(first, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
			ks = append(ks, secretKeyword{word: w, kind: k, rule: rule, min: min, cjk: cjk})
		}
	}
	add(kPassword, ruleSecret, 1,
		"password", "passwd", "passphrase", "passcode", "passwort", "kennwort",
		"contraseña", "contrasena", "contrasenya", "mot de passe", "mot_de_passe", "motdepasse", "mdp",
		"senha", "palavra-passe", "wachtwoord", "parola", "hasło", "haslo", "heslo", "jelszó", "jelszo", "lozinka",
		"geslo", "lösenord", "losenord", "passord", "adgangskode", "salasana", "şifre", "sifre",
		"пароль", "парола", "κωδικός", "סיסמה", "كلمة المرور", "كلمة السر", "رمز عبور",
		"密码", "密碼", "口令", "パスワード", "पासवर्ड", "비밀번호", "mật khẩu", "kata sandi", "รหัสผ่าน")
	add(kPassword, rulePath, 1, "pwd")
	add(kPassword, ruleSecret, 1, "pass")
	ks[len(ks)-1].equals = true
	add(kAWSKey, ruleAWS, 8,
		"aws_secret_access_key", "aws-secret-access-key", "awssecretaccesskey",
		"secret_access_key", "secretaccesskey", "aws_secret_key", "aws_secret")
	add(kAPIKey, ruleSecret, 8,
		"api_key", "api-key", "apikey", "api key", "api_token", "api-token", "apitoken",
		"api_secret", "api-secret", "app_secret", "app-secret", "access_token", "access-token",
		"accesstoken", "auth_token", "auth-token", "authtoken", "refresh_token", "refresh-token",
		"id_token", "client_secret", "client-secret", "clientsecret", "secret_key", "secret-key",
		"secretkey", "private_key", "private-key", "private_token", "private-token", "access_key",
		"access-key", "session_token", "session-token", "webhook_secret", "secret")
	add(kAPIKey, ruleSecret, 16, "token")
	add(kAPIKey, ruleAuth, 8, "authorization", "proxy-authorization")
	return ks
}()

// secretKeywordsByLast indexes secretKeywords by the last byte of their last rune in
// lower, upper and title case, longest first, so that one separator costs
// a short list of comparisons.
var secretKeywordsByLast = func() (t [256][]*secretKeyword) {
	for i := range secretKeywords {
		k := &secretKeywords[i]
		last, _ := utf8.DecodeLastRuneInString(k.word)
		seen := map[byte]bool{}
		for _, r := range [...]rune{last, unicode.ToUpper(last), unicode.ToTitle(last)} {
			s := string(r)
			if b := s[len(s)-1]; !seen[b] {
				seen[b] = true
				t[b] = append(t[b], k)
			}
		}
	}
	for b := range t {
		ks := t[b]
		for i := 1; i < len(ks); i++ {
			for j := i; j > 0 && len(ks[j].word) > len(ks[j-1].word); j-- {
				ks[j], ks[j-1] = ks[j-1], ks[j]
			}
		}
	}
	return t
}()

// keySuffixes may follow a secretKeyword in a key: "password_confirmation".
var keySuffixes = [...]string{
	"_confirmation", "-confirmation", "confirmation", "_confirm", "-confirm", "confirm",
	"_again", "again", "_repeat", "repeat",
}

// authSchemes are HTTP authorization schemes; the credential follows them.
var authSchemes = [...]string{"bearer", "basic", "token", "bot", "apikey", "api-key", "key", "sso-key", "negotiate", "ntlm"}

// authRestSchemes carry their credential in parameters: the rest of the
// value goes.
var authRestSchemes = [...]string{"digest", "aws4-hmac-sha256", "hmac", "signature", "oauth"}

// findKeyValues finds values of secret keys: "password=...", "passwd: ...",
// `"api_key": "..."`, "Authorization: Basic ...", in URLs, env dumps, JSON,
// YAML and prose. Only the value is replaced; the key tells triage what
// kind of thing was there.
func findKeyValues(text string, spans []redSpan) []redSpan {
	colon, equals := nextByte(text, 0, ':'), nextByte(text, 0, '=')
	for off := 0; off < len(text); {
		if colon < off {
			colon = nextByte(text, off, ':')
		}
		if equals < off {
			equals = nextByte(text, off, '=')
		}
		p := min(colon, equals)
		if p == len(text) {
			return spans
		}
		off = p + 1
		kw := matchKey(text, keyEnd(text, p))
		if kw == nil || (kw.equals && text[p] != '=') {
			continue
		}
		q := p + 1
		if q < len(text) && (text[q] == '=' || (text[p] == '=' && text[q] == '>')) {
			q++ // ":=", "==" and "=>"
		}
		s, ok := secretValue(text, q, kw)
		if !ok {
			continue
		}
		spans = append(spans, s)
		off = s.end
	}
	return spans
}

// nextByte returns the index of the first c in text at or after i, or
// len(text).
func nextByte(text string, i int, c byte) int {
	if j := strings.IndexByte(text[i:], c); j >= 0 {
		return i + j
	}
	return len(text)
}

// keyEnd returns where the key before the separator at p ends, skipping
// spaces, a closing quote (possibly escaped) and markdown bold.
func keyEnd(text string, p int) int {
	for p > 0 && isHSpace(text[p-1]) {
		p--
	}
	switch {
	case p > 0 && isQuoteByte(text[p-1]):
		p--
		if p > 0 && text[p-1] == '\\' {
			p--
		}
	case p > 1 && text[p-1] == '*' && text[p-2] == '*':
		p -= 2
	}
	return p
}

// matchKey returns the secretKeyword the key ending at ke names, if any.
func matchKey(text string, ke int) *secretKeyword {
	k := ke
	for k > 0 && isASCIIDigit(text[k-1]) {
		k--
	}
	if k > 0 {
		if c := text[k-1] | 0x20; c == 'n' || c == 'm' || c == 't' {
			for _, suf := range keySuffixes {
				if k > len(suf) && strings.EqualFold(text[k-len(suf):k], suf) {
					k -= len(suf)
					break
				}
			}
		}
	}
	if k == 0 {
		return nil
	}
	last := text[k-1]
	if last < utf8.RuneSelf && isASCIILetter(last) {
		last |= 0x20
	}
	for _, kw := range secretKeywordsByLast[last] {
		b := k - len(kw.word)
		if b < 0 || !strings.EqualFold(text[b:k], kw.word) || !keyStart(text, b, kw) {
			continue
		}
		return kw
	}
	return nil
}

// keyStart reports whether a secretKeyword may start at b: after a non-letter
// ("db_password", "x-api-key"), at a camelCase hump ("newPassword"), or
// anywhere for secretKeywords in scripts without spaces between words.
func keyStart(text string, b int, kw *secretKeyword) bool {
	if b == 0 || kw.cjk {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:b])
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
		return true
	}
	return r < utf8.RuneSelf && byteClass[byte(r)]&(cLower|cDigit) != 0 && byteClass[text[b]]&cUpper != 0
}

// secretValue reads the value that starts after the separator, at q, and
// judges it by the secretKeyword's rule.
func secretValue(text string, q int, kw *secretKeyword) (redSpan, bool) {
	// Spaces and quotes written as references ("&nbsp;", "&quot;", "%22")
	// separate too.
	q = sepSkip(text, q)
	if strings.HasPrefix(text[q:], "**") {
		q = spanWhile(text, q+2, isHSpace) // "**Password:** hunter2"
	}
	if kw.rule == ruleAuth {
		return authValue(text, q, kw)
	}
	// A path is refused by its first bytes: not reading the rest keeps
	// "pwd:/pwd:/…" linear (each ':' read the run to its end: 55 s for
	// 512 KB).
	if kw.rule == rulePath && q < len(text) && !isQuoteByte(text[q]) && text[q] != '\\' && isPath(text[q:]) {
		return redSpan{}, false
	}
	vs, ve, quoted := kvValue(text, q)
	// A value that is only another key and its separator ("api_key:
	// password: Xk9…") is a pair written inside this one: that key judges
	// its own value by its own rule (the scanner reaches its separator
	// next), and this pair holds no secret. Only a value as short as a
	// key counts, so a run of keys with no space ("password=password=…")
	// stays one value, redacted whole: a chain costs its length once.
	if in := bareKey(text, vs, ve, quoted); in != nil {
		n := sepSkip(text, ve)
		vs2, ve2, quoted2 := kvValue(text, n)
		if n == ve || ve2 == vs2 || bareKey(text, vs2, ve2, quoted2) != nil {
			return redSpan{}, false // no value, or a chain: a later key judges
		}
		if _, ok := secretValue(text, ve, in); ok || ve2-vs2 >= in.min || text[ve2-1] == ':' {
			return redSpan{}, false
		}
		// The inner key refused its value only as too short for it
		// ("password: secret: hunter2"), but this key still said a secret
		// follows: judge it by this rule. A refusal for what the value is
		// (a path, "none") stands, as does a value that is a label.
		vs, ve, quoted = vs2, ve2, quoted2
	}
	v := text[vs:ve]
	if len(v) < kw.min || isPlaceholder(v) || strings.Trim(v, "*•xX.") == "" || notASecret(v) {
		return redSpan{}, false
	}
	k := kw.kind
	switch kw.rule {
	case rulePath:
		if isPath(v) {
			return redSpan{}, false
		}
	case ruleAWS:
		if len(v) != 40 || strings.IndexFunc(v, func(r rune) bool {
			return r > 0x7F || !(isASCIIAlnum(byte(r)) || r == '/' || r == '+' || r == '=')
		}) >= 0 {
			k = kAPIKey
		}
	}
	return redSpan{vs, ve, k}, true
}

// isPath reports whether a value starts like a file path, which is what
// "pwd" is in a shell prompt or an environment dump, not a password.
func isPath(v string) bool {
	return v[0] == '/' || v[0] == '~' || v[0] == '.' || v[0] == '$' || (len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/'))
}

// bareKey returns the key a value is made of alone ("password:"), if any.
func bareKey(text string, vs, ve int, quoted bool) *secretKeyword {
	if quoted || ve-vs < 2 || ve-vs > maxBareKey {
		return nil
	}
	// One key, not a run of them ("password=password=…" is one value).
	if strings.ContainsAny(text[vs:ve-2], ":=") {
		return nil
	}
	p := ve - 1
	if op := text[p-1 : ve]; op == ":=" || op == "==" || op == "=>" {
		p-- // the separators findKeyValues reads
	}
	if text[p] != ':' && text[p] != '=' {
		return nil
	}
	if in := matchKey(text, p); in != nil && (!in.equals || text[p] == '=') {
		return in
	}
	return nil
}

// sepSkip skips the spaces, and spaces or quotes written as references
// (a few at most), that set a value off from its key.
func sepSkip(text string, q int) int {
	q = spanWhile(text, q, isHSpace)
	for k := 0; k < 4; k++ {
		n := sepRefAt(text, q)
		if n == 0 {
			break
		}
		q = spanWhile(text, q+n, isHSpace)
	}
	return q
}

// maxBareKey is the longest value read as a key of its own: an
// environment variable's name ("SPRING_DATASOURCE_PRIMARY_DB_PASSWORD:").
const maxBareKey = 128

// maxQuoted bounds the search for a closing quote, so that a line of
// unclosed quotes costs linear time; no secret is that long.
const maxQuoted = 512

// notASecret reports whether a value says that there is no secret, or
// starts a structure rather than a value: replacing it would only hide
// what the report is about, and a found value is replaced everywhere.
func notASecret(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "null", "nil", "none", "undefined", "empty", "n/a", "required", "optional",
		"string", "redacted", "<redacted>", "[redacted]", "[filtered]", "<hidden>", "hidden",
		"{", "[", "(", "{}", "[]", "()", "<", "\\":
		return true
	}
	return false
}

// kvValue returns the value starting at q: the inside of a quoted string
// (also a \"escaped\" one within JSON) on the same line, or else the run
// up to a space, quote, '&', ';' or ','.
func kvValue(text string, q int) (vs, ve int, quoted bool) {
	if q >= len(text) {
		return q, q, false
	}
	c := text[q]
	switch {
	case c == '\\' && q+1 < len(text) && isQuoteByte(text[q+1]):
		quote := text[q+1]
		for i := q + 2; i+1 < min(len(text), q+maxQuoted) && text[i] != '\n'; i++ {
			if text[i] == '\\' && text[i+1] == quote {
				return q + 2, i, true
			}
		}
		q += 2
	case isQuoteByte(c):
		for i := q + 1; i < min(len(text), q+maxQuoted) && text[i] != '\n'; i++ {
			if text[i] == '\\' {
				i++
				continue
			}
			if text[i] == c {
				return q + 1, i, true
			}
		}
		q++
	}
	ve = q
	for ve < len(text) && (!isValueStop(text[ve]) || text[ve] == '&' && !nextParam(text, ve+1, ve == q)) {
		ve++
	}
	return q, ve, false
}

// nextParam reports whether what follows an '&' at i-1 starts another
// parameter ("&user=...", "&amp;") or nothing: only then does the '&' end
// a value, so that "password = Tr0ub4dor&3" is read whole. first says the
// '&' opens the value.
func nextParam(text string, i int, first bool) bool {
	// An entity closed by its semicolon ("&amp;", "&quot;", "&#39;") ends
	// the value, as the '&' or quote it stands for would.
	if _, n := entityAt(text, i-1, 0); n > 0 && text[i-2+n] == ';' {
		return true
	}
	j := i
	for j < len(text) && j-i < 64 && (isKeyByte(text[j]) || text[j] == '.' || text[j] == '[' || text[j] == ']') {
		j++
	}
	if j == i {
		return j == len(text) || isValueStop(text[j])
	}
	// A key of its own right after the separator ("password: &password:
	// …") starts another pair: its value is the secret, not the key. Later
	// in a value ("hunter2&token:Xk9…") it stays part of the value, which
	// is then redacted whole: ending the value there would hand the rest
	// to the inner key's own rule, which may refuse it.
	return j < len(text) && (text[j] == '=' || first && text[j] == ':' && matchKey(text, j) != nil)
}

func isValueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '&', ';', ',':
		return true
	}
	return false
}

// authValue reads an Authorization header value: the credential after an
// optional scheme word.
func authValue(text string, q int, kw *secretKeyword) (redSpan, bool) {
	vs, lim, quoted := kvValue(text, q)
	if !quoted {
		vs, lim = q, len(text)
	}
	t := vs
	w := spanWhile(text, t, func(c byte) bool { return isASCIIAlnum(c) || c == '-' })
	rest := false
	if w > t && w < lim && isHSpace(text[w]) {
		word := text[t:w]
		for _, s := range authSchemes {
			if strings.EqualFold(word, s) {
				t = spanWhile(text, w, isHSpace)
			}
		}
		for _, s := range authRestSchemes {
			if strings.EqualFold(word, s) {
				t, rest = spanWhile(text, w, isHSpace), true
			}
		}
	}
	e := t
	if rest {
		// Parameters, themselves quoted with '"', run to the end of the
		// quoted value or of the line.
		e = lim
		if !quoted {
			if j := strings.IndexAny(text[t:], "\n\r'`"); j >= 0 {
				e = t + j
			}
		}
	} else {
		for e < lim && !isValueStop(text[e]) {
			e++
		}
	}
	for e > t && isHSpace(text[e-1]) {
		e--
	}
	if e-t < kw.min || isPlaceholder(text[t:e]) {
		return redSpan{}, false
	}
	return redSpan{t, e, kw.kind}, true
}

// findEmails finds e-mail addresses: a local part, '@', and a domain with
// at least one dot and a top-level domain of letters. "v1.2@beta",
// "user@localhost", "pkg@1.2.3" and "icon@2x.png" are not addresses.
func findEmails(text string, spans []redSpan) []redSpan {
	prevEnd := 0
	for off := 0; ; {
		j := strings.IndexByte(text[off:], '@')
		if j < 0 {
			return spans
		}
		at := off + j
		off = at + 1
		ls := at
		for ls > prevEnd {
			r, size := utf8.DecodeLastRuneInString(text[prevEnd:ls])
			if !isLocalRune(r) {
				break
			}
			ls -= size
		}
		for ls < at && (text[ls] == '.' || text[ls] == '-' || text[ls] == '+') {
			ls++
		}
		if ls == at || text[ls:at] == "git" {
			continue
		}
		end := emailDomainEnd(text, at+1)
		if end < 0 {
			continue
		}
		spans = append(spans, redSpan{ls, end, kEmail})
		off, prevEnd = end, end
	}
}

func isLocalRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIAlnum(byte(r)) || r == '.' || r == '_' || r == '%' || r == '+' || r == '-'
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}

func isDomainRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIAlnum(byte(r)) || r == '.' || r == '-'
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}

// emailDomainEnd returns where the e-mail domain starting at d ends, or -1.
// Trailing labels that cannot end a domain ("example.com.5") are dropped.
func emailDomainEnd(text string, d int) int {
	e := d
	for e < len(text) {
		r, size := utf8.DecodeRuneInString(text[e:])
		if !isDomainRune(r) {
			break
		}
		e += size
	}
	dom := strings.TrimRight(text[d:e], ".-")
	if dom == "" || !isASCIIAlnum(dom[0]) && dom[0] < utf8.RuneSelf {
		return -1
	}
	// "icon@2x.png" is an image at two times scale.
	if x := spanWhile(dom, 0, isASCIIDigit); x > 0 && x+1 < len(dom) && dom[x] == 'x' && dom[x+1] == '.' {
		return -1
	}
	if strings.Contains(dom, "..") {
		dom = dom[:strings.Index(dom, "..")]
	}
	for {
		dot := strings.LastIndexByte(dom, '.')
		if dot <= 0 {
			return -1
		}
		if isTLD(dom[dot+1:]) {
			return d + len(dom)
		}
		dom = strings.TrimRight(dom[:dot], "-")
	}
}

func isTLD(s string) bool {
	n := 0
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			return false
		}
		n++
	}
	return n >= 2
}

// ibanLengths holds the IBAN length of each country in the SWIFT registry
// (and of the countries that use IBANs outside it).
var ibanLengths = func() (t [26][26]uint8) {
	const registry = "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 " +
		"DE22 DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 " +
		"HN28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 " +
		"LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 " +
		"QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 " +
		"UA29 VA22 VG24 XK20 YE30 " +
		"AO25 BF28 BJ28 CF27 CG27 CI28 CM27 CV25 DZ26 GA27 GQ27 GW25 HT28 IR26 KM27 MA28 MG27 " +
		"ML28 MZ25 NE28 SN28 TD27 TG28"
	for _, e := range strings.Fields(registry) {
		t[e[0]-'A'][e[1]-'A'] = (e[2]-'0')*10 + e[3] - '0'
	}
	return t
}()

// findIBANs finds IBANs, plain or in groups of four, that have their
// country's length and pass the ISO 13616 mod-97 check; an account number
// with a wrong check is a typo or not an IBAN, and is left alone.
func findIBANs(text string, spans []redSpan) []redSpan {
	for i := nextDigit(text, 2); i+1 < len(text); i = nextDigit(text, i) {
		if isASCIIDigit(text[i+1]) && isASCIILetter(text[i-1]) && isASCIILetter(text[i-2]) && (i == 2 || !isIdentByte(text[i-3])) {
			if e, ok := matchIBAN(text, i-2); ok {
				spans = append(spans, redSpan{i - 2, e, kIBAN})
				i = e
				continue
			}
		}
		i = spanWhile(text, i, isASCIIDigit)
	}
	return spans
}

func matchIBAN(text string, s int) (int, bool) {
	var buf [34]byte
	var ends [35]int
	n, p := 0, s
	for n < len(buf) && p < len(text) {
		c := text[p]
		if isASCIIAlnum(c) {
			if isASCIILetter(c) {
				c &^= 0x20
			}
			buf[n] = c
			n++
			p++
			ends[n] = p
			continue
		}
		if c == ' ' && n >= 4 && n%4 == 0 && p+1 < len(text) && isASCIIAlnum(text[p+1]) {
			p++
			continue
		}
		break
	}
	if n < 15 {
		return 0, false
	}
	if l := int(ibanLengths[buf[0]-'A'][buf[1]-'A']); l > 0 {
		if n < l || (ends[l] < len(text) && isASCIIAlnum(text[ends[l]])) {
			return 0, false
		}
		n = l
	} else if ends[n] < len(text) && isASCIIAlnum(text[ends[n]]) {
		return 0, false
	}
	// Mod 97 of the number formed by the account part, then the country
	// and check digits, with letters as 10..35.
	m := 0
	for k := range n {
		c := buf[(k+4)%n]
		if isASCIIDigit(c) {
			m = (m*10 + int(c-'0')) % 97
		} else {
			m = (m*100 + int(c-'A'+10)) % 97
		}
	}
	return ends[n], m == 1
}

// numberStart reports whether a card or phone number may start at i: not
// inside a word, a decimal, a version, an amount, a path or an id such as
// "#100234" or "ORD-2024-000123".
//
// floor is the end of the previous match of the same detector: the text
// before it is about to become a placeholder, which ends in ']'.
func numberStart(text string, i, floor int) bool {
	if i == 0 || i-1 < floor {
		return true
	}
	c := text[i-1]
	if c >= utf8.RuneSelf {
		// Chinese, Japanese and Korean put no space before a number.
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
			!unicode.In(r, unicode.L, unicode.N, unicode.M, unicode.Sc)
	}
	if isIdentByte(c) {
		return false
	}
	switch c {
	case '.', ',', '/', '#', '$', '%', '&', '=', '@', '-', '+', '\\', '^', '~':
		return false
	}
	return true
}

// findCards finds payment card numbers: 13 to 19 digits, contiguous or in
// the groups cards are printed in, that pass the Luhn check and start like
// an issued card. Order ids, timestamps and phone numbers rarely do all
// three.
func findCards(text string, spans []redSpan) []redSpan {
	floor := 0
	for i := nextDigit(text, 0); i < len(text); i = nextDigit(text, i) {
		run := spanWhile(text, i, isASCIIDigit)
		if mayStartCard(run-i) && numberStart(text, i, floor) && !afterIBANPrefix(text, i, floor) {
			if e, ok := matchCard(text, i); ok {
				spans = append(spans, redSpan{i, e, kCard})
				floor, i = e, e
				continue
			}
		}
		i = run
	}
	return spans
}

// mayStartCard reports whether a card number may start with a run of n
// digits: a group of four or the whole number, as cardShape requires, so
// that most runs (times, versions, ids) are passed over at once.
func mayStartCard(n int) bool {
	return n == 4 || n >= 13 && n <= 19
}

// afterIBANPrefix reports whether the digits at i follow a country code and
// check digits ("DE89 3704 ..."): the rest of an IBAN that failed its
// checksum is not a card number.
func afterIBANPrefix(text string, i, floor int) bool {
	return i-5 >= floor && text[i-1] == ' ' && isASCIIDigit(text[i-2]) && isASCIIDigit(text[i-3]) &&
		isASCIILetter(text[i-4]) && isASCIILetter(text[i-5]) && (i-6 < floor || !isIdentByte(text[i-6]))
}

func matchCard(text string, i int) (int, bool) {
	var lens, ends [8]int
	ng, total, p := 0, 0, i
	var sep byte
	for ng < len(lens) {
		e := spanWhile(text, p, isASCIIDigit)
		lens[ng], ends[ng] = e-p, e
		ng++
		total += e - p
		if total > 19 || e+1 >= len(text) || !isASCIIDigit(text[e+1]) || (text[e] != ' ' && text[e] != '-') || (sep != 0 && text[e] != sep) {
			break
		}
		sep = text[e]
		p = e + 1
	}
	for k := ng; k >= 1; k-- {
		digits := 0
		for _, l := range lens[:k] {
			digits += l
		}
		if digits < 13 || digits > 19 || !cardShape(lens[:k]) {
			continue
		}
		end := ends[k-1]
		if k == ng && end < len(text) {
			c := text[end]
			if isIdentByte(c) || ((c == '.' || c == ',') && end+1 < len(text) && isASCIIDigit(text[end+1])) {
				continue
			}
		}
		if cardNumber(text[i:end]) {
			return end, true
		}
	}
	return 0, false
}

// cardShape accepts one run of digits and the groups cards are printed or
// typed in: fours (13, 14, 15, 16 and 19 digits) and the 4-6-5 and 4-6-4
// groups of American Express and Diners. Other groupings of 13 to 19
// digits are more often account or tracking numbers.
func cardShape(lens []int) bool {
	switch {
	case len(lens) == 1:
		return true
	case len(lens) == 3:
		return lens[0] == 4 && lens[1] == 6 && (lens[2] == 5 || lens[2] == 4)
	case len(lens) == 4:
		return lens[0] == 4 && lens[1] == 4 && lens[2] == 4 && lens[3] >= 1
	case len(lens) == 5:
		return lens[0] == 4 && lens[1] == 4 && lens[2] == 4 && lens[3] == 4 && lens[4] == 3
	}
	return false
}

// cardNumber checks the issuer prefix and the Luhn check digit of s, which
// holds digits and separators.
func cardNumber(s string) bool {
	var d [19]byte
	n := 0
	for i := 0; i < len(s); i++ {
		if isASCIIDigit(s[i]) {
			d[n] = s[i] - '0'
			n++
		}
	}
	switch d[0] {
	case 3, 4, 5, 6:
	case 2:
		if iin := int(d[0])*1000 + int(d[1])*100 + int(d[2])*10 + int(d[3]); iin < 2221 || iin > 2720 {
			return false
		}
	default:
		return false
	}
	sum := 0
	for k := range n {
		v := int(d[n-1-k])
		if k%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// findPhones finds phone numbers in the shapes people write them:
// international ("+49 30 1234567", "+1 (555) 123-4567"), North American
// ("(555) 123-4567", "555-123-4567"), French ("06 12 34 56 78"), and
// national numbers with a trunk zero ("030 1234567", "020 7946 0958").
// A bare run of digits is never a phone number: it is far more often a
// build, a count or an id.
func findPhones(text string, spans []redSpan) []redSpan {
	floor, plus, paren, digit := 0, -1, -1, -1
	for i := 0; i < len(text); {
		// Each next position is kept until passed: looking for the next
		// digit afresh after every '(' made a text of parentheses and no
		// digits quadratic.
		if plus < i {
			plus = nextByte(text, i, '+')
		}
		if paren < i {
			paren = nextByte(text, i, '(')
		}
		if digit < i {
			digit = nextDigit(text, i)
		}
		if i = min(digit, plus, paren); i == len(text) {
			break
		}
		next := i + 1 // after a '+' or '(', or after the run of digits
		if isASCIIDigit(text[i]) {
			next = spanWhile(text, i, isASCIIDigit)
		}
		if numberStart(text, i, floor) && !continuesNumber(text, i, floor) && mayStartPhone(text, i, next) {
			if e, ok := matchPhone(text, i); ok {
				spans = append(spans, redSpan{i, e, kPhone})
				floor, i = e, e
				continue
			}
		}
		i = next
	}
	return spans
}

// mayStartPhone is a quick test of what matchPhone requires of a number
// that starts with a run of digits, text[i:e]: a separator and another
// group after it, unless the run is a bare mobile number of eleven digits.
func mayStartPhone(text string, i, e int) bool {
	if !isASCIIDigit(text[i]) {
		return true // '+' or '('
	}
	if e-i == 11 {
		return true
	}
	return e+1 < len(text) && strings.IndexByte(" -./", text[e]) >= 0 && (isASCIIDigit(text[e+1]) || (text[e] == ' ' && text[e+1] == '('))
}

// nextDigit returns the index of the first ASCII digit in text at or after
// i, or len(text). It tests eight bytes at a time, because the number
// detectors would otherwise spend most of their time reading letters.
func nextDigit(text string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(text); i += 8 {
		b := text[i : i+8]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		y := x &^ highs                 // no carries between bytes below
		atLeast0 := y + (0x80-'0')*ones // high bit set where y >= '0'
		above9 := y + (0x80-'9'-1)*ones // high bit set where y > '9'
		if m := atLeast0 &^ above9 &^ x & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(text); i++ {
		if isASCIIDigit(text[i]) {
			return i
		}
	}
	return len(text)
}

// continuesNumber reports whether i follows a digit and one separator: a
// phone number does not start in the middle of a longer run of digit groups
// (the tail of a bad IBAN, a list of readings).
func continuesNumber(text string, i, floor int) bool {
	return i-2 >= floor && (text[i-1] == ' ' || text[i-1] == '-' || text[i-1] == '.') && isASCIIDigit(text[i-2])
}

type phoneGroup struct {
	start, end int // digits
	paren      bool
	sep        byte // separator before the group; 0 for none
}

// phoneGroups holds the groups of one phone number candidate.
type phoneGroups [10]phoneGroup

func matchPhone(text string, i int) (int, bool) {
	var gs phoneGroups
	ng, digits, p := 0, 0, i
	plus := text[p] == '+'
	if plus {
		p++
	}
	var sep byte
	end := p
	for ng < len(gs) {
		g := phoneGroup{sep: sep}
		switch {
		case p < len(text) && text[p] == '(':
			q := spanWhile(text, p+1, isASCIIDigit)
			if q == p+1 || q-p-1 > 5 || q >= len(text) || text[q] != ')' {
				break
			}
			g.start, g.end, g.paren = p+1, q, true
		case p < len(text) && isASCIIDigit(text[p]):
			g.start, g.end = p, spanWhile(text, p, isASCIIDigit)
		}
		if g.end == 0 {
			break
		}
		gs[ng] = g
		ng++
		digits += g.end - g.start
		end = g.end
		if g.paren {
			end++
		}
		p, sep = end, 0
		if p+1 < len(text) && strings.IndexByte(" -./", text[p]) >= 0 && (isASCIIDigit(text[p+1]) || (text[p] == ' ' && text[p+1] == '(')) {
			sep = text[p]
			p++
		} else if g.paren && p < len(text) && isASCIIDigit(text[p]) {
			sep = ')'
		} else {
			break
		}
	}
	if ng == 0 || (ng == 1 && !plus && !bareMobile(text[gs[0].start:gs[0].end])) {
		return 0, false
	}
	// What follows must not continue the number, a word or a decimal.
	if end < len(text) {
		c := text[end]
		if isIdentByte(c) || c == '%' {
			return 0, false
		}
		if end+1 < len(text) && isASCIIDigit(text[end+1]) && strings.IndexByte(".,-/:", c) >= 0 {
			return 0, false
		}
	}
	if phoneShape(text, gs[:ng], digits, plus) {
		return end, true
	}
	return 0, false
}

// bareMobile reports whether a run of digits is a mobile number in the
// form it is usually written without separators: eleven digits, "1[3-9]"
// in China, "070", "080" or "090" in Japan and "010" in Korea. Other bare
// runs are builds, counts and ids.
func bareMobile(d string) bool {
	if len(d) != 11 {
		return false
	}
	switch {
	case d[0] == '1':
		return d[1] >= '3' && d[1] <= '9'
	case d[0] == '0' && d[2] == '0':
		return d[1] == '1' || d[1] == '7' || d[1] == '8' || d[1] == '9'
	}
	return false
}

func phoneShape(text string, gs []phoneGroup, digits int, plus bool) bool {
	var lensBuf [len(phoneGroups{})]int
	lens := lensBuf[:0]
	for _, g := range gs {
		lens = append(lens, g.end-g.start)
	}
	first := text[gs[0].start]
	sameSep := func(from int, allowed string) bool {
		for _, g := range gs[from:] {
			if g.sep != gs[from].sep || strings.IndexByte(allowed, g.sep) < 0 {
				return false
			}
		}
		return true
	}
	noSlash := func() bool {
		for _, g := range gs {
			if g.sep == '/' {
				return false
			}
		}
		return true
	}
	switch {
	case len(gs) == 1 && !plus:
		return !gs[0].paren && bareMobile(text[gs[0].start:gs[0].end])
	case plus:
		// Dots only as the one separator of three or more groups:
		// "+1.555.123.4567", not the coordinates "+48.856614 2.352222".
		dots := 0
		for _, g := range gs {
			if g.sep == '.' {
				dots++
			}
		}
		if dots > 0 && (dots != len(gs)-1 || len(gs) < 3) {
			return false
		}
		return digits >= 7 && digits <= 15 && noSlash()
	case len(gs) >= 2 && lens[0] >= 4 && first == '0' && text[gs[0].start+1] == '0' && text[gs[0].start+2] != '0' && !gs[0].paren:
		// "0049 30 1234567": an international prefix.
		return digits >= 9 && digits <= 17 && noSlash()
	case equalInts(lens, 3, 3, 4) || equalInts(lens, 1, 3, 3, 4):
		// North America: "(555) 123-4567", "555-123-4567", "1-800-555-0199".
		a := len(gs) - 3
		if (a == 1 && first != '1') || text[gs[a].start] < '2' {
			return false
		}
		if gs[a].paren {
			return (gs[a+1].sep == ' ' || gs[a+1].sep == ')' || gs[a+1].sep == '-') && strings.IndexByte(" -.", gs[a+2].sep) >= 0
		}
		return sameSep(1, " -.")
	case equalInts(lens, 2, 2, 2, 2, 2):
		// France: "06 12 34 56 78".
		return first == '0' && !gs[0].paren && sameSep(1, " .-")
	case equalInts(lens, 3, 2, 2, 2):
		// Spain and Italy, mobile: "612 34 56 78".
		return first >= '6' && first <= '9' && !gs[0].paren && sameSep(1, " .-")
	case first == '0' && lens[0] >= 2 && lens[0] <= 5 && len(gs) <= 4 && text[gs[0].start+1] != '0':
		// A trunk zero and an area code: "030 1234567", "(030) 1234567",
		// "020 7946 0958", "06-12345678", "0151/23456789".
		if digits < 9 || digits > 12 {
			return false
		}
		for k, g := range gs[1:] {
			if lens[k+1] < 2 || (g.sep != ' ' && g.sep != '-' && g.sep != '/' && g.sep != ')') {
				return false
			}
		}
		return true
	}
	return false
}

func equalInts(a []int, b ...int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasASCIIDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isASCIIDigit(s[i]) {
			return true
		}
	}
	return false
}

// disjoint returns spans sorted and without overlaps. Every stage promises
// that already, and the check costs one pass; a stage that broke it would
// otherwise make apply slice out of range on a reporter's text.
func disjoint(spans []redSpan) []redSpan {
	ok := true
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			ok = false
			break
		}
	}
	if ok {
		return spans
	}
	slices.SortStableFunc(spans, func(a, b redSpan) int { return a.start - b.start })
	out := spans[:1]
	// owner is the length of the span whose kind the merged one carries.
	owner := out[0].end - out[0].start
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.start >= last.end {
			out = append(out, s)
			owner = s.end - s.start
			continue
		}
		// Overlapping spans are merged, so that no part of either
		// secret stays; the merged span is named after the longer one,
		// the earlier on a tie, which is the more specific match.
		if n := s.end - s.start; n > owner {
			last.kind, owner = s.kind, n
		}
		last.end = max(last.end, s.end)
	}
	return out
}
