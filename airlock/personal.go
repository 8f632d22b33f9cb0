package airlock

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// personalKindNames names the kinds of national identifiers and addresses.
var personalKindNames = []string{
	"us-ssn", "uk-nino", "fr-insee", "de-taxid", "in-aadhaar", "br-cpf", "postal-address",
}

var (
	kSSN     = kindNamed("us-ssn")
	kNINO    = kindNamed("uk-nino")
	kINSEE   = kindNamed("fr-insee")
	kTaxID   = kindNamed("de-taxid")
	kAadhaar = kindNamed("in-aadhaar")
	kCPF     = kindNamed("br-cpf")
	kAddress = kindNamed("postal-address")
)

// National identifiers are numbers, and so are builds, orders, invoices
// and timestamps. Each scheme is matched by its checksum or structure, and
// a number that could be many things needs, besides, either the shape the
// scheme is printed in or a word naming the scheme shortly before it:
//
//   - US SSN: ddd-dd-dddd is the shape SSNs are written in and little else
//     is; spaced or bare nine digits need a context word (nine digits are
//     a zip+4, a routing number, an id).
//   - UK NINO: two letters, six digits and a suffix letter is distinctive
//     enough in upper case; without the suffix, or in lower case, it needs
//     a context word (ticket and part numbers look like "AB123456").
//   - French NIR: the key is mod 97, so a random number passes one time in
//     a hundred; the printed grouping "1 84 12 76 451 089 46" (or the key
//     apart) stands alone, fifteen bare digits (an IMEI, an order id) need
//     a context word.
//   - German Steuer-IdNr: eleven digits with a mod-11,10 check and the
//     repetition rule still leaves one number in 250, and "12 345 678 901"
//     is also a large amount with spaces between thousands: always a
//     context word.
//   - Aadhaar: printed as "1234 5678 9012", which with the Verhoeff check
//     stands alone; twelve bare or dashed digits need a context word. A
//     number with a wrong check digit stays, as for every other scheme:
//     test fixtures and validator bug reports quote such numbers on
//     purpose.
//   - CPF: "ddd.ddd.ddd-dd" with two check digits stands alone; eleven bare
//     digits (a phone number, an invoice) need a context word.

// idContext lists, per kind, the words that name the scheme, in lower case.
// A word matches at a word start; words ending in a letter must also end
// at a word end, so that "nir" is not found in "nirvana".
var idContext = map[secretKind][]string{
	kSSN: {"ssn", "social security", "social-security", "soc sec", "soc. sec", "ss#", "ss no", "ss number"},
	kNINO: {"nino", "national insurance", "ni number", "ni no", "ni#", "ni:", "ni field",
		"hmrc", "insurance number"},
	kINSEE: {"nir", "insee", "sécurité sociale", "securite sociale", "sécu", "secu", "carte vitale",
		"numéro ss", "numero ss", "n° ss", "social security"},
	kTaxID: {"steuer-id", "steuerid", "steuer id", "steuer-idnr", "steueridnr", "idnr", "id-nr",
		"identifikationsnummer", "steueridentifikationsnummer", "steuer-identifikationsnummer",
		"steuernummer", "tax id", "tax-id", "taxid", "tin", "tax identification"},
	kAadhaar: {"aadhaar", "aadhar", "adhaar", "adhar", "आधार", "uidai"},
	kCPF:     {"cpf"},
}

// idContextWindow is how far before a number its context word may start.
const idContextWindow = 80

// hasIDContext reports whether a word naming kind k ends shortly before
// start, outside any placeholder (the placeholder "[us-ssn]" names the
// scheme, but is no reporter's word).
func hasIDContext(text string, start int, k secretKind) bool {
	from := max(0, start-idContextWindow)
	for from > 0 && !utf8.RuneStart(text[from]) {
		from++
	}
	// ASCII letters only, so that positions in win are positions in text;
	// the non-ASCII context words are in lower case already.
	var buf [idContextWindow]byte
	n := copy(buf[:], text[from:start])
	for k := range n {
		if c := buf[k]; c >= 'A' && c <= 'Z' {
			buf[k] = c + 'a' - 'A'
		}
	}
	win := buf[:n]
	for _, w := range idContext[k] {
		for off := 0; ; {
			j := bytes.Index(win[off:], []byte(w))
			if j < 0 {
				break
			}
			p := off + j
			off = p + 1
			if p > 0 && isASCIIAlnum(win[p-1]) {
				continue
			}
			e := p + len(w)
			if last := w[len(w)-1]; isASCIILetter(last) && e < len(win) && isASCIILetter(win[e]) && !(win[e] == 's' && (e+1 == len(win) || !isASCIILetter(win[e+1]))) {
				continue
			}
			if insidePlaceholder(text, from+p) {
				continue
			}
			return true
		}
	}
	return false
}

// idGroups is a candidate number: its digits (and the letters of a
// Corsican department, "2A"), the length of each group and the separator
// between groups.
type idGroups struct {
	d    [16]byte
	n    int
	lens [8]int
	ng   int
	sep  byte // ' ', or '-' for groups joined by '-' and '.'
	seps [9]byte
}

// shape reports whether the groups have exactly the lengths given.
func (g *idGroups) shape(lens ...int) bool { return equalInts(g.lens[:g.ng], lens...) }

// findPersonal finds national identifiers (of the schemes above) and
// postal addresses. Both start at a run of digits, so one pass over the
// runs serves both, and most runs (times, versions, counts) are passed over
// on a glance at their length and the bytes around them. An identifier is
// judged whole, with the groups that follow its first run: a number inside
// a longer one is not an identifier.
func findPersonal(text string, spans []redSpan) []redSpan {
	floor := 0
	for i := nextDigit(text, 0); i < len(text); i = nextDigit(text, i) {
		run := spanWhile(text, i, isASCIIDigit)
		if run < len(text) && run+1 < len(text) && isASCIIDigit(text[run+1]) && (text[run] == ':' || text[run] == ',') {
			i = run // a time or a decimal: "09:14", "4,99"
			continue
		}
		// Most runs are passed over here, without a call.
		var after byte
		if run < len(text) {
			after = text[run]
		}
		n := run - i
		if !idLength[min(n, 16)] && !idGroupBefore(n, after) && (n > 5 || text[i] == '0' || !houseNumberAfter[after] && (i == 0 || text[i-1] != ' ')) {
			i = run
			continue
		}
		if mayStartID(text, i, run) {
			if s, ok := matchNINO(text, i, run, floor); ok {
				spans = append(spans, s)
				floor, i = s.end, s.end
				continue
			}
			if idStart(text, i, floor) {
				if s, ok := matchNumberID(text, i, floor); ok {
					spans = append(spans, s)
					floor, i = s.end, s.end
					continue
				}
			}
		}
		if run-i <= 5 && text[i] != '0' && mayStartAddress(text, i, run, floor) {
			if s, ok := matchAddress(text, i, floor); ok {
				spans = append(spans, s)
				floor, i = s.end, s.end
				continue
			}
		}
		i = run
	}
	return spans
}

// mayStartID is a quick test of what the identifiers need of a run of
// digits text[i:e]: the length of a whole number, or another group after
// it, or the letters of a NINO before it.
func mayStartID(text string, i, e int) bool {
	n := e - i
	if !idLength[min(n, 16)] && (e >= len(text) || !idGroupBefore(n, text[e])) {
		return false
	}
	if (n == 6 || n == 2) && i >= 2 && isASCIILetter(text[i-2]) {
		// The prefix of a NINO, a word of two letters: "AB123456C",
		// "AB 12 34 56 C".
		if isASCIILetter(text[i-1]) && (i == 2 || !isASCIILetter(text[i-3])) ||
			text[i-1] == ' ' && i >= 3 && isASCIILetter(text[i-3]) && (i == 3 || !isASCIILetter(text[i-4])) {
			return true
		}
	}
	if i >= 2 && (text[i-1] == ' ' || text[i-1] == '-' || text[i-1] == '.') && isASCIIDigit(text[i-2]) {
		return false // a later group of a longer number
	}
	switch {
	case n == 9 || n == 11 || n == 12 || n == 15:
		return true
	case n > 15:
		return false
	case e < len(text) && (text[e] == 'A' || text[e] == 'B'):
		return text[e-1] == '2' && n >= 6 // a Corsican NIR: "109082A..."
	case e+1 < len(text) && isASCIIDigit(text[e+1]):
		// The first group of a formatted number: "386-02-...",
		// "302.661...", "302661320-73", "1 84 12 ...", "18 731 ...".
		m := spanWhile(text, e+1, isASCIIDigit) - e - 1
		switch text[e] {
		case ' ':
			return m == 2 && (n == 3 || n == 1 || n == 13) || m == 3 && (n == 2 || n == 3) || m == 4 && n == 4
		case '-':
			return m == 2 && (n == 3 || n == 9) || m == 3 && n == 3 || m == 4 && n == 4
		case '.':
			return (m == 3 || m == 2) && n == 3
		}
		return false
	}
	return false
}

// idLength marks the lengths of a run of digits that may be a whole
// identifier or a NINO's digits.
var idLength = [17]bool{2: true, 6: true, 9: true, 11: true, 12: true, 15: true}

// idGroupBefore reports whether a run of n digits followed by c may be the
// first group of a formatted identifier.
func idGroupBefore(n int, c byte) bool {
	switch c {
	case ' ':
		return n <= 4 || n == 13
	case '-':
		return n == 3 || n == 4 || n == 9
	case '.':
		return n == 3
	case 'A', 'B':
		return n == 6 // "109082A...", a Corsican NIR
	}
	return false
}

// houseNumberAfter marks the bytes that may follow a house number that
// starts an address: a space, a comma or the letter of "221B".
var houseNumberAfter = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == ' ' || c == ',' || isASCIILetter(byte(c))
	}
	return t
}()

// notBeforeHouseNumber and notAfterHouseNumber mark the bytes that make a
// number part of a word, a version, an id, a time or a decimal.
var notBeforeHouseNumber, notAfterHouseNumber = func() (before, after [256]bool) {
	for c := range 256 {
		before[c] = isIdentByte(byte(c))
	}
	for _, c := range []byte(".,:/-#+$@=\\[(~^&*") {
		before[c] = true
	}
	// A house number follows a space or ASCII punctuation; after a letter
	// of another script it is glued to a word.
	for c := utf8.RuneSelf; c < 256; c++ {
		before[c] = true
	}
	for _, c := range []byte(".,:/") {
		after[c] = true
	}
	return before, after
}()

// frenchTypeStart marks the first two letters of the French street words,
// which follow the house number in lower case: "12 rue ...".
var frenchTypeStart = func() (t [26][26]bool) {
	for w, f := range addrLexicon {
		if f&stBeforeName != 0 && isASCIILetter(w[0]) && isASCIILetter(w[1]) {
			t[w[0]-'a'][w[1]-'a'] = true
		}
	}
	t['b'-'a']['i'-'a'], t['t'-'a']['e'-'a'] = true, true // "12 bis", "12 ter"
	return t
}()

// mayStartAddress is a quick test of what a house number text[i:e] needs
// around it: a capitalized word, a French street word or an ordinal after
// it, or a capitalized word (or one with letters beyond ASCII) before it.
func mayStartAddress(text string, i, e, floor int) bool {
	if e+1 < len(text) && notAfterHouseNumber[text[e]] && isASCIIDigit(text[e+1]) {
		return false // "2.4", "18:30", "4,99"
	}
	if i > floor && notBeforeHouseNumber[text[i-1]] {
		return false // "S22", "v2", "2.4.1", "#12", "版本2"
	}
	// Number first.
	h := e
	if h < len(text) && isASCIILetter(text[h]) {
		h++ // "221B"
	}
	if h+2 < len(text) && (text[h] == ' ' || (text[h] == ',' && text[h+1] == ' ')) {
		p := h + 1
		if text[h] == ',' {
			p++
		}
		if p+1 < len(text) {
			c := text[p]
			if text[h] == ',' && (c < 'a' || c > 'z') {
				c = 0 // only French puts a comma there: "12, rue ..."
			}
			switch {
			case c >= 'A' && c <= 'Z':
				// A name, not "12 GB": two capitals only as a direction.
				d := text[p+1]
				switch {
				case d >= 'a' && d <= 'z' || d == '\'':
					return true
				case d >= 'A' && d <= 'Z':
					if (c == 'N' || c == 'S') && (d == 'E' || d == 'W') {
						return true
					}
					// A shipping label in capitals: "742 EVERGREEN
					// TERRACE", "12 RUE DE LA PAIX". Units of two
					// letters ("12 GB") stay out, and matchAddress still
					// wants a street word ("3 CPU" is none).
					if p+2 < len(text) && text[p+2] >= 'A' && text[p+2] <= 'Z' {
						return true
					}
				default:
					// One letter only as a direction: "455 W Harmon".
					if c == 'N' || c == 'S' || c == 'E' || c == 'W' {
						return true
					}
				}
			case c >= utf8.RuneSelf:
				return true
			case isASCIIDigit(c):
				// "350 5th Ave".
				if q := spanShort(text, p, isASCIIDigit); q-p <= 3 && q < len(text) && strings.IndexByte("snrt", text[q]) >= 0 {
					return true
				}
			case c >= 'a' && c <= 'z' && text[p+1] >= 'a' && text[p+1] <= 'z':
				if frenchTypeStart[c-'a'][text[p+1]-'a'] {
					return true
				}
			}
		}
	}
	// Type first: the word before, after a space or ", ".
	k := i - 1
	if k <= floor || text[k] != ' ' {
		return false
	}
	if text[k-1] == ',' {
		k--
	}
	if k > floor && text[k-1] == '.' {
		k--
	}
	we := k
	for s := k; k > floor && s-k < maxAddrWord; k-- {
		c := text[k-1]
		if c >= utf8.RuneSelf {
			return true
		}
		if !isASCIILetter(c) && !((c == '-' || c == '\'') && k-1 > floor && isASCIILetter(text[k-2])) {
			break
		}
	}
	if k == we || text[k] < 'A' || text[k] > 'Z' {
		return false
	}
	// A capitalized word: a street in one word ("Keizersgracht"), or the
	// last word of a name with more words before it ("Calle de Goya"),
	// not a product after a comma or a colon ("Device: Pixel 7").
	if k-2 >= floor && text[k-1] == ' ' && (isASCIILetter(text[k-2]) || text[k-2] == '/') {
		return true
	}
	if k-2 >= floor && text[k-1] == ' ' && text[k-2] >= utf8.RuneSelf {
		if r, _ := utf8.DecodeLastRuneInString(text[:k-1]); unicode.IsLetter(r) {
			return true // "Allée Verte 5", not "、Android 14"
		}
	}
	if k-3 >= floor && text[k-1] == ' ' && text[k-2] == '.' {
		// After an abbreviation, "Av. Paulista", not a sentence.
		a := k - 2
		for a > floor && isASCIILetter(text[a-1]) && k-2-a < 5 {
			a--
		}
		if a < k-2 && k-2-a <= 4 && (a == floor || !isASCIILetter(text[a-1])) {
			return true
		}
	}
	if _, ok := streetSuffixFold(text[k : i-1]); ok {
		return true
	}
	return e+2 < len(text) && text[e] == ',' && text[e+1] == ' ' && distinctivePostcode(text, e+2)
}

// streetSuffixFold is streetSuffix of a word in any case, with trailing
// spaces, commas or periods after it (a '.' may end a suffix: "str.").
func streetSuffixFold(w string) (ambiguous, ok bool) {
	for len(w) > 0 && (w[len(w)-1] == ' ' || w[len(w)-1] == ',') {
		w = w[:len(w)-1]
	}
	if len(w) < 3 {
		return false, false
	}
	for _, k := range suffixByLast[w[len(w)-1]|0x20] {
		if s := streetSuffixes[k]; len(w) >= len(s.s) && strings.EqualFold(w[len(w)-len(s.s):], s.s) {
			return s.ambiguous, true
		}
	}
	return false, false
}

// idStart reports whether an identifier may start at i: not inside a word,
// a decimal, a path or an id with a prefix ("ORD-2024-...").
func idStart(text string, i, floor int) bool {
	if i == 0 || i-1 < floor {
		return true
	}
	c := text[i-1]
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}
	if isIdentByte(c) {
		return false
	}
	switch c {
	case '.', ',', '/', '#', '$', '%', '&', '@', '-', '+', '\\', '^', '~':
		return false
	case ':', '=':
		return i-2 < 0 || !isASCIIDigit(text[i-2]) // "SSN:622820050", "ssn=...", not "12:30"
	}
	return true
}

// matchNumberID reads the groups starting at i and judges them.
func matchNumberID(text string, i, floor int) (redSpan, bool) {
	var g idGroups
	p := i
	end := i
	for g.ng < len(g.lens) {
		q := p
		for q < len(text) && g.n < len(g.d) {
			c := text[q]
			// A Corsican department: "2A" or "2B" after the first digits.
			if !isASCIIDigit(c) && !((c == 'A' || c == 'B') && q > p && text[q-1] == '2' && g.n >= 5 && g.n <= 6) {
				break
			}
			g.d[g.n] = c
			g.n++
			q++
		}
		if q == p || (q < len(text) && isASCIIDigit(text[q])) {
			return redSpan{}, false // too long for any scheme
		}
		g.lens[g.ng] = q - p
		g.ng++
		end = q
		if q+1 >= len(text) || !isASCIIDigit(text[q+1]) {
			break
		}
		c := text[q]
		switch {
		case c == ' ' && (g.ng == 1 || g.sep == ' '):
			// A spaced number does not start in the middle of another.
			if g.ng == 1 && i-2 >= floor && i >= 2 && text[i-1] == ' ' && isASCIIDigit(text[i-2]) {
				return redSpan{}, false
			}
			g.sep = ' '
		case (c == '-' || c == '.') && g.sep != ' ':
			g.sep = '-'
		default:
			c = 0
		}
		if c == 0 {
			break
		}
		g.seps[g.ng] = c
		p = q + 1
	}
	// What follows must not continue the number or a word.
	if end < len(text) {
		c := text[end]
		if isIdentByte(c) || c == '%' {
			return redSpan{}, false
		}
		if end+1 < len(text) && isASCIIDigit(text[end+1]) && (c == '.' || c == ',' || c == '/' || c == ':' || (c == '-' && g.sep == ' ')) {
			return redSpan{}, false
		}
	}
	d := string(g.d[:g.n])
	ctx := func(k secretKind) bool { return hasIDContext(text, i, k) }
	var k secretKind
	ok := false
	switch g.n {
	case 9:
		k = kSSN
		ok = validSSN(d) && ((g.sep == '-' && g.shape(3, 2, 4) && g.seps[1] == '-' && g.seps[2] == '-') ||
			((g.ng == 1 || g.shape(3, 2, 4)) && ctx(kSSN)))
	case 11:
		switch {
		case validCPF(d) && (g.shape(3, 3, 3, 2) && g.seps[1] == '.' && g.seps[2] == '.' && g.seps[3] == '-' ||
			(g.ng == 1 || g.shape(3, 3, 3, 2) || g.shape(9, 2)) && ctx(kCPF)):
			k, ok = kCPF, true
		case validTaxID(d) && (g.ng == 1 || g.shape(2, 3, 3, 3) || g.shape(3, 4, 4) || g.shape(3, 3, 3, 2)) && ctx(kTaxID):
			k, ok = kTaxID, true
		}
	case 12:
		k = kAadhaar
		ok = allDigits(d) && d[0] >= '2' && (g.ng == 1 || g.shape(4, 4, 4)) &&
			validAadhaar(d) && (g.sep == ' ' || ctx(kAadhaar))
	case 15:
		k = kINSEE
		ok = validINSEE(d) && (g.sep == ' ' && (g.shape(1, 2, 2, 2, 3, 3, 2) || g.shape(13, 2)) ||
			ctx(kINSEE))
	}
	if !ok {
		return redSpan{}, false
	}
	return redSpan{i, end, k}, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isASCIIDigit(s[i]) {
			return false
		}
	}
	return true
}

// validSSN applies the rules of issued SSNs: no area 000, 666 or 900-999,
// no group 00, no serial 0000.
func validSSN(d string) bool {
	return allDigits(d) && d[:3] != "000" && d[:3] != "666" && d[0] != '9' && d[3:5] != "00" && d[5:] != "0000"
}

// validCPF checks both mod-11 check digits; a number of one repeated digit
// passes them but is not issued.
func validCPF(d string) bool {
	if !allDigits(d) || strings.Count(d, d[:1]) == len(d) {
		return false
	}
	for n := 9; n <= 10; n++ {
		sum := 0
		for k := range n {
			sum += int(d[k]-'0') * (n + 1 - k)
		}
		if r := sum * 10 % 11 % 10; r != int(d[n]-'0') {
			return false
		}
	}
	return true
}

// validTaxID checks the German Steuer-IdNr: no leading zero, in the first
// ten digits exactly one digit repeated (twice, or three times but not all
// three in a row) and the ISO 7064 MOD 11,10 check digit.
func validTaxID(d string) bool {
	if !allDigits(d) || d[0] == '0' {
		return false
	}
	var count [10]int
	for k := range 10 {
		count[d[k]-'0']++
	}
	repeated := -1
	for v, c := range count {
		switch {
		case c == 2 || c == 3:
			if repeated >= 0 {
				return false
			}
			repeated = v
		case c > 3:
			return false
		}
	}
	if repeated < 0 {
		return false
	}
	if count[repeated] == 3 && strings.Contains(d[:10], strings.Repeat(string(rune('0'+repeated)), 3)) {
		return false
	}
	product := 10
	for k := range 10 {
		sum := (int(d[k]-'0') + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = sum * 2 % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	return check == int(d[10]-'0')
}

var verhoeffD = [10][10]uint8{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5},
	{2, 3, 4, 0, 1, 7, 8, 9, 5, 6}, {3, 4, 0, 1, 2, 8, 9, 5, 6, 7},
	{4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
	{6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3},
	{8, 7, 6, 5, 9, 3, 2, 1, 0, 4}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
}

var verhoeffP = [8][10]uint8{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4},
	{5, 8, 0, 3, 7, 9, 6, 1, 4, 2}, {8, 9, 1, 6, 0, 4, 3, 5, 2, 7},
	{9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
	{2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8},
}

// validAadhaar checks an Aadhaar number: twelve digits, the first 2 to 9,
// the last a Verhoeff check digit.
func validAadhaar(d string) bool {
	if !allDigits(d) || d[0] < '2' {
		return false
	}
	c := uint8(0)
	for k := range len(d) {
		c = verhoeffD[c][verhoeffP[k%8][d[len(d)-1-k]-'0']]
	}
	return c == 0
}

// validINSEE checks a French NIR: sex 1 or 2 (3, 4, 7, 8 for the
// provisional numbers), a month, and the key 97 - (number mod 97), with
// the Corsican departments 2A and 2B counted as 19 and 18.
func validINSEE(d string) bool {
	switch d[0] {
	case '1', '2', '3', '4', '7', '8':
	default:
		return false
	}
	if !allDigits(d[1:5]) || !allDigits(d[7:]) {
		return false
	}
	if m := int(d[3]-'0')*10 + int(d[4]-'0'); m == 0 || (m > 12 && m < 20) || (m > 42 && m < 50) {
		return false
	}
	n := int64(0)
	for k := range 13 {
		c := d[k]
		switch {
		case k == 6 && (c == 'A' || c == 'B'):
			if d[5] != '2' {
				return false
			}
			// 2A is 19 and 2B is 18: the '2' already read becomes a '1'.
			n -= 1
			c = '9' - (c - 'A')
		case !isASCIIDigit(c):
			return false
		}
		n = n*10 + int64(c-'0')
	}
	key := int(d[13]-'0')*10 + int(d[14]-'0')
	return key == 97-int(n%97)
}

// ninoPrefixInvalid holds the prefixes never issued.
var ninoPrefixInvalid = [...]string{"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}

func validNINOPrefix(a, b byte) bool {
	a, b = a&^0x20, b&^0x20
	if strings.IndexByte("DFIQUV", a) >= 0 || strings.IndexByte("DFIOQUV", b) >= 0 {
		return false
	}
	for _, p := range ninoPrefixInvalid {
		if p[0] == a && p[1] == b {
			return false
		}
	}
	return true
}

// matchNINO judges a UK National Insurance number whose digits start at i
// (their first run ends at run): "AB123456C", "AB 12 34 56 C".
func matchNINO(text string, i, run, floor int) (redSpan, bool) {
	// The two letters, glued or one space before.
	l := i - 2
	if l >= 1 && text[i-1] == ' ' {
		l = i - 3
	}
	if l < floor || l < 0 || !isASCIILetter(text[l]) || !isASCIILetter(text[l+1]) || (l > 0 && isWordBefore(text, l)) {
		return redSpan{}, false
	}
	if !validNINOPrefix(text[l], text[l+1]) {
		return redSpan{}, false
	}
	upper := isUpperOrDigit(text[l]) && isUpperOrDigit(text[l+1])
	// Six digits, together or in pairs.
	p := run
	switch {
	case run-i == 6:
	case run-i == 2:
		for k := 0; k < 2; k++ {
			if p+3 > len(text) || text[p] != ' ' || !isASCIIDigit(text[p+1]) || !isASCIIDigit(text[p+2]) {
				return redSpan{}, false
			}
			p += 3
		}
		if p < len(text) && isASCIIDigit(text[p]) {
			return redSpan{}, false
		}
	default:
		return redSpan{}, false
	}
	// The suffix letter, glued or after a space.
	end, suffix := p, false
	if p < len(text) {
		q := p
		if text[q] == ' ' && q+1 < len(text) {
			q++
		}
		// After a space a lower-case suffix only after a lower-case
		// prefix: "AB 12 34 56 a new form" is prose.
		if c := text[q] &^ 0x20; c >= 'A' && c <= 'D' && !isWordAt(text, q+1) && (q == p || text[q] < 'a' || !upper) {
			end, suffix = q+1, true
			upper = upper && text[q] < 'a'
		}
	}
	if !suffix && isWordAt(text, p) {
		return redSpan{}, false
	}
	if !(suffix && upper) && !hasIDContext(text, l, kNINO) {
		return redSpan{}, false
	}
	return redSpan{l, end, kNINO}, true
}

// Postal addresses. A house number is a run of digits, so the detector
// reads each one that could be a house number and looks at its
// neighbours for a street: "<number> <Name> <Type>" in English ("221B
// Baker St"), "<number> <type> <name>" in French ("12 rue de la Paix"),
// "<Type> <name> <number>" in most of Europe and Latin America ("Calle
// Mayor 10", "Via Roma 1", "Rua Augusta 100") and "<Name><type> <number>"
// in German and Dutch ("Hauptstraße 5", "Keizersgracht 123"). It then
// extends the match over the unit, city, state and postcode that follow
// ("Apt 4B", "10115 Berlin", "CA 94043", "SW1A 2AA"). A street word with no
// number, a number that is a version, a time or a price, and a name in
// lower case are not addresses.

// Where a street type stands relative to the name and the number.
const (
	stAfterName  = 1 << iota // number, name, type: "221B Baker Street"
	stBeforeName             // number, type, name: "12 rue de la Paix"
	stFirst                  // type, name, number: "Via Roma 1"
	stAmbiguous              // also an English word: type-first needs more evidence
)

// Flags of the words the address detector knows, besides the street type
// flags above.
const (
	wNotHouse    = 1 << (iota + 4) // a number after it is something else: "line 42"
	wUnit                          // introduces a unit: "Apt", "Suite"
	wParticle                      // may stand inside a name: "de", "van der"
	wFloor                         // follows a floor number: "2o izquierda"
	wPreposition                   // opens a German street name: "Am Mühlbach"
	wAdjective                     // opens a street name: "Lange Straße"
	wWeak                          // a street type that is also an English noun
)

// addrLexicon holds the words, in lower case, and their flags; a word
// whose hash misses addrBloom is in none of them, which is most words.
var addrLexicon, addrBloom = func() (map[string]uint16, *[128]uint64) {
	m := map[string]uint16{}
	add := func(flag uint16, words string) {
		for _, w := range strings.Fields(words) {
			m[w] |= flag
		}
	}
	add(stAfterName, "street st st. avenue ave ave. av. road rd rd. boulevard blvd blvd. lane ln ln. drive dr dr. "+
		"court ct ct. way place pl pl. terrace ter terr parkway pkwy highway hwy circle cir square sq close "+
		"crescent cres grove gardens mews row walk hill trail trl alley plaza loop crossing pike expressway "+
		"freeway rise vale parade esplanade")
	add(stBeforeName, "rue avenue av av. bd bd. boulevard bld chemin ch. place allée allee impasse imp. quai route "+
		"cours square passage voie sentier faubourg fg promenade esplanade cité cite villa hameau montée parvis "+
		"rond-point")
	add(stFirst, "calle c/ avenida av av. avda avda. paseo plaza carrera camino ronda travesía travesia glorieta "+
		"via viale piazza piazzale corso largo vicolo strada contrada rua travessa praça praca alameda estrada "+
		"rodovia ul. ulica aleja al. plac osiedle straße strasse str. allee gasse platz weg damm ring ufer "+
		"chaussee straat laan gracht plein kade singel dijk "+
		// Belgian and Swiss French: "Rue Neuve 12", "Avenue Louise 54".
		"rue boulevard bd chemin allée allee impasse quai avenue place route")
	add(stAmbiguous, "via plaza ring weg avenue place route")
	// Also English nouns, or parts of product and game names ("Google
	// Drive", "Animal Crossing").
	add(wWeak, "drive way walk row loop hill trail crossing close place square circle plaza "+
		"court lane terrace gardens grove rise vale parade esplanade mews alley pike freeway expressway highway "+
		"route passage villa promenade cours voie")
	add(wParticle, "de del della delle dei degli di da das do dos du des la le les l' d' "+
		"van der den ten ter am an im auf zum zur y e of the upon sur sous en lès les-")
	add(wAdjective, "lange große grosse kleine alte neue hohe obere untere oude nieuwe korte hoge")
	add(wPreposition, "am an im in auf zum zur unter hinter vor beim bei alt")
	add(wNotHouse, "line lines ln l version ver v build page p port step steps level chapter "+
		"section sec item items issue ticket order row column col test case figure fig table slide screen "+
		"episode season part phase sprint release rev revision patch error code status tab option pr commit "+
		"bug run job node room floor building suite gate track lap round map zone region sector world stage "+
		"act scene mission checkpoint route exit platform of every top bottom number no id "+
		"zeile seite stufe ligne étape niveau línea página nivel riga pagina livello linha regel")
	add(wUnit, "apt apt. apartment suite ste ste. unit flat fl fl. floor # ap ap. apto apto. "+
		"dpto dpto. depto depto. piso planta puerta esc esc. escalera whg whg. wohnung top stiege stock bte "+
		"boîte étage etage bât bât. bâtiment bat bat. app app. appt appt. int int. interno scala sala casa "+
		"lote bloco bl bl. room rm rm.")
	add(wFloor, "izquierda izq izq. izda izda. derecha dcha dcha. dra dra. centro piso planta puerta "+
		"étage etage floor fl andar stock og esq esq. dto dto.")
	bloom := new([128]uint64)
	for w := range m {
		h := lexHash(w, 0, len(w))
		bloom[h>>6] |= 1 << (h & 63)
	}
	return m, bloom
}()

// streetSuffixes end German, Austrian, Swiss and Dutch street names
// written as one word ("Lindenstraße"); ring is also English ("String").
var streetSuffixes = [...]struct {
	s         string
	ambiguous bool
}{
	{"straße", false}, {"strasse", false}, {"str.", false}, {"weg", false}, {"platz", false},
	{"allee", false}, {"gasse", false}, {"damm", false}, {"ufer", false}, {"chaussee", false},
	{"steig", false}, {"pfad", false}, {"ring", true}, {"straat", false}, {"laan", false},
	{"gracht", false}, {"plein", false}, {"kade", false}, {"singel", false}, {"dijk", false},
	{"dreef", false},
}

// lexHash hashes the length and the first and last bytes of text[s:e],
// ASCII letters in lower case, to 13 bits.
func lexHash(text string, s, e int) uint32 {
	first, last := text[s], text[e-1]
	if first >= 'A' && first <= 'Z' {
		first += 'a' - 'A'
	}
	if last >= 'A' && last <= 'Z' {
		last += 'a' - 'A'
	}
	return (uint32(e-s)*0x9E3779B1 ^ uint32(first)*0x85EBCA6B ^ uint32(last)*0xC2B2AE35) >> 19
}

// lex returns the flags of the word text[w.start:w.end].
func lex(buf *[maxAddrWord]byte, text string, w addrWord) uint16 {
	if w.end-w.start > maxAddrWord {
		return 0
	}
	f := uint16(0)
	if h := lexHash(text, w.start, w.end); addrBloom[h>>6]&(1<<(h&63)) != 0 {
		f = addrLexicon[string(lowerBytes(buf, text, w.start, w.end))]
	}
	if f == 0 && w.end-w.start > 2 && text[w.end-1] == '.' {
		// "Drive." ends a sentence.
		return lex(buf, text, addrWord{start: w.start, end: w.end - 1, capital: w.capital})
	}
	return f
}

// regionCodes are the US states, Canadian provinces and Brazilian states,
// which follow the city: "Columbus, OH 43215", "São Paulo - SP".
var regionCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO " +
		"MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR " +
		"AB BC MB NB NL NS NT NU ON PE QC SK YT " +
		"AC AP AM BA CE ES GO MA MG MS MT PA PB PE PI PR RJ RN RS RO RR SC SP SE TO DF " +
		"NSW VIC QLD TAS ACT") {
		m[w] = true
	}
	return m
}()

// addrWord is a word of text, text[start:end], with the '.' or "c/" slash
// that ends an abbreviation; capital reports an upper-case first letter.
type addrWord struct {
	start, end int
	capital    bool
}

// maxAddrWord bounds a word the detector looks up; longer ones are names.
const maxAddrWord = 40

// lowerBytes returns text[s:e] with ASCII letters lowered, in buf (a map
// lookup of string(lowerBytes(...)) allocates nothing).
func lowerBytes(buf *[maxAddrWord]byte, text string, s, e int) []byte {
	n := min(e-s, maxAddrWord)
	for k := range n {
		c := text[s+k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[k] = c
	}
	return buf[:n]
}

// addrWordAfter reads the word that starts at p: letters (any script) and
// marks, with inner apostrophes and hyphens and an abbreviating '.' or a
// "c/" slash at its end.
func addrWordAfter(text string, p int) (addrWord, bool) {
	q := p
	// Bounded, so that a run of letters costs each number near it a
	// constant.
	for q < len(text) && q-p <= 3*maxAddrWord {
		c := text[q]
		if c < utf8.RuneSelf {
			if isASCIILetter(c) {
				q++
				continue
			}
			if (c == '\'' || c == '-') && q > p && q+1 < len(text) && (isASCIILetter(text[q+1]) || text[q+1] >= utf8.RuneSelf && isWordAt(text, q+1)) {
				q++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(text[q:])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			break
		}
		q += size
	}
	if q == p || q-p > 3*maxAddrWord {
		return addrWord{}, false
	}
	return wordFrom(text, p, q), true
}

// wordFrom makes the word text[p:q], with a '.' or "c/" slash after it.
func wordFrom(text string, p, q int) addrWord {
	if q < len(text) && (text[q] == '.' || (text[q] == '/' && q-p == 1)) {
		q++
	}
	w := addrWord{start: p, end: q}
	if c := text[p]; c < utf8.RuneSelf {
		w.capital = c >= 'A' && c <= 'Z'
		// "l'Église": the capital after the elision counts.
		if !w.capital && q-p > 2 && text[p+1] == '\'' {
			r, _ := utf8.DecodeRuneInString(text[p+2:])
			w.capital = unicode.IsUpper(r)
		}
	} else {
		r, _ := utf8.DecodeRuneInString(text[p:])
		w.capital = unicode.IsUpper(r)
	}
	return w
}

// addrWordBefore reads the word that ends at e (as addrWordAfter would
// read it).
func addrWordBefore(text string, e int) (addrWord, bool) {
	q := e
	if q > 0 && (text[q-1] == '.' || text[q-1] == '/') {
		q--
	}
	s := q
	for s > 0 && e-s <= 3*maxAddrWord {
		c := text[s-1]
		if c < utf8.RuneSelf {
			if isASCIILetter(c) || ((c == '\'' || c == '-') && s < q && s-1 > 0 && isWordBefore(text, s-1)) {
				s--
				continue
			}
			break
		}
		r, size := utf8.DecodeLastRuneInString(text[:s])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			break
		}
		s -= size
	}
	if s == q || e-s > 3*maxAddrWord || (s > 0 && isWordBefore(text, s)) {
		return addrWord{}, false
	}
	w := wordFrom(text, s, q)
	if w.end != e {
		return addrWord{}, false
	}
	return w, true
}

// houseNumber reads a house number at i: one to five digits not starting
// with 0, then a letter ("221B", "7a") or a range ("12-14"). It returns
// its end, or -1.
func houseNumber(text string, i int) int {
	e := spanShort(text, i, isASCIIDigit)
	if e-i > 5 || text[i] == '0' {
		return -1
	}
	if e < len(text) {
		c := text[e]
		switch {
		case isASCIILetter(c):
			if isWordAt(text, e+1) {
				return -1 // "12px", "3rd", "5GB"
			}
			e++
		case c == '-' && e+1 < len(text) && isASCIIDigit(text[e+1]):
			f := spanShort(text, e+1, isASCIIDigit)
			if f-e-1 > 5 || (f < len(text) && (isWordAt(text, f) || text[f] == '-')) {
				return -1 // a date or an id
			}
			e = f
		case c == '.' || c == ',' || c == ':' || c == '/':
			if e+1 < len(text) && isASCIIDigit(text[e+1]) {
				return -1 // a decimal, a version, a time, a fraction
			}
		case c == '%' || c == '_' || c == '$':
			return -1
		}
	}
	if e < len(text) && isWordAt(text, e) {
		return -1
	}
	return e
}

// matchAddress judges the number at i as a house number.
func matchAddress(text string, i, floor int) (redSpan, bool) {
	if i > floor {
		switch text[i-1] {
		case '.', '/', '#', '$', '-', '+', '\\', '@', '=', ':', '[', '(', '_', '~', '^', '&', '*':
			return redSpan{}, false
		}
	}
	h := houseNumber(text, i)
	if h < 0 {
		return redSpan{}, false
	}
	var buf [maxAddrWord]byte
	// Number first: a space (or ", ") and a letter follow.
	if h+1 < len(text) && (text[h] == ' ' || (text[h] == ',' && h+2 < len(text) && text[h+1] == ' ')) {
		if start, end, weak, ok := numberFirstStreet(text, i, h, floor, &buf); ok {
			e, post := addressTail(text, end, &buf)
			if weak && e == end && !endsSentence(text, end) || !post && quotedWhole(text, start, e) {
				return redSpan{}, false
			}
			return redSpan{start, e, kAddress}, true
		}
	}
	// Type first: a name ends just before, after a space or ", ".
	if i-2 >= floor && (text[i-1] == ' ' || text[i-1] == '\t') {
		p := i - 1
		if text[p-1] == ',' {
			p--
		}
		if start, need, ok := typeFirstStreet(text, p, floor, &buf); ok {
			end, post := addressTail(text, h, &buf)
			if need == needPostcode && !post || need == needEnd && !post && end == h && !endsClause(text, h) {
				return redSpan{}, false
			}
			if !post && quotedWhole(text, start, end) {
				return redSpan{}, false
			}
			return redSpan{start, end, kAddress}, true
		}
		// A street named without a street word ("Damrak 1, 1012 LG
		// Amsterdam") counts before a postcode of a shape nothing else
		// has.
		if w, ok := addrWordBefore(text, p); ok && w.start >= floor && w.capital && lex(&buf, text, w)&wNotHouse == 0 &&
			h+2 < len(text) && text[h] == ',' && text[h+1] == ' ' && distinctivePostcode(text, h+2) {
			end, _ := addressTail(text, h, &buf)
			return redSpan{adjectiveBefore(text, w.start, floor, &buf), end, kAddress}, true
		}
	}
	return redSpan{}, false
}

// distinctivePostcode reports whether a postcode that little else looks
// like starts at q: Dutch "1012 LG", Portuguese and Brazilian "4000-447",
// "01310-200", British "SW1A 2AA", or one with a country prefix, "D-10115".
func distinctivePostcode(text string, q int) bool {
	if ukPostcode(text, q) > 0 {
		return true
	}
	d := spanShort(text, q, isASCIIDigit)
	switch n := d - q; {
	case n == 4 && d+3 < len(text) && text[d] == ' ' && isUpperPair(text, d+1) && !isWordAt(text, d+3):
		return true
	case (n == 4 || n == 5) && d+4 <= len(text) && text[d] == '-' && spanShort(text, d+1, isASCIIDigit) == d+4 && !isWordAt(text, d+4):
		return true
	case n == 0:
		l := spanShort(text, q, func(c byte) bool { return c >= 'A' && c <= 'Z' })
		return l-q >= 1 && l-q <= 2 && l+5 < len(text) && text[l] == '-' && spanShort(text, l+1, isASCIIDigit)-l-1 >= 4
	}
	return false
}

// endsClause reports whether the number ending at e ends a clause: an
// address cited in passing ("via Slack 3 times") goes on with prose.
func endsClause(text string, e int) bool {
	if e >= len(text) {
		return true
	}
	switch text[e] {
	case ',', ';', ')', '\n', '\r', '!', '?':
		return true
	case '.':
		return e+1 >= len(text) || !isWordAt(text, e+1)
	}
	return false
}

// endsSentence reports whether the street ending at e ends a sentence or
// the text: "5 Google Drive files" is about files.
func endsSentence(text string, e int) bool {
	return e >= len(text) || text[e] == '\n' || text[e] == '\r' || (endsClause(text, e) && text[e] != ',' && text[e] != ')')
}

// quotedWhole reports whether text[s:e] is quoted whole: the name of a
// level, a test or a street in a game, not someone's address (unless a
// postcode comes with it: "I typed '12 Main St, Springfield, IL 62704'").
func quotedWhole(text string, s, e int) bool {
	if s == 0 || e >= len(text) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(text[:s])
	if before == ' ' && s > 1 {
		before, _ = utf8.DecodeLastRuneInString(text[:s-1])
	}
	after, _ := utf8.DecodeRuneInString(text[e:])
	if after == ' ' && e+1 < len(text) {
		after, _ = utf8.DecodeRuneInString(text[e+1:])
	}
	return strings.ContainsRune("'\"`«‹„‚“‘", before) && strings.ContainsRune("'\"`»›“”‘’", after)
}

// numberFirstStreet reads "<number> <Name...> <Type>" and "<number> <type>
// <name...>" from the number text[i:h]. It returns where the address
// starts (a unit before the number, "Flat 3, ", included) and ends, and
// whether the street word is also a common English noun ("Drive", "Way",
// "Place"), which then needs more of an address after it.
func numberFirstStreet(text string, i, h, floor int, buf *[maxAddrWord]byte) (start, end int, weak, ok bool) {
	// The word before the number must not make it a line, a version, ...
	if w, ok := addrWordBefore(text, spanBackHSpace(text, i)); ok && w.start >= floor {
		if text[w.end-1] == '.' && w.end-w.start > 1 {
			w.end-- // "No. 5"
		}
		if lex(buf, text, w)&wNotHouse != 0 {
			return 0, 0, false, false
		}
	}
	p := h + 1
	if text[h] == ',' {
		p++
	}
	// French "12 bis rue ...".
	if w, ok := addrWordAfter(text, p); ok {
		if w.end-w.start == 3 && w.end < len(text) && text[w.end] == ' ' {
			if lw := lowerBytes(buf, text, w.start, w.end); string(lw) == "bis" || string(lw) == "ter" {
				p = w.end + 1
			}
		}
	}
	end = -1
	names := 0
	for n := 0; n < 6 && p < len(text); n++ {
		w, ok := addrWordAfter(text, p)
		ordinal := false
		if !ok {
			// An ordinal street name: "350 5th Ave".
			e := spanShort(text, p, isASCIIDigit)
			if e == p || e-p > 3 || e+2 > len(text) {
				break
			}
			suf := string(lowerBytes(buf, text, e, min(e+2, len(text))))
			if suf != "st" && suf != "nd" && suf != "rd" && suf != "th" || isWordAt(text, e+2) {
				break
			}
			w, ordinal = addrWord{start: p, end: e + 2, capital: true}, true
		}
		if !ordinal {
			if f := lex(buf, text, w); f&stBeforeName != 0 && n == 0 {
				// French: the name follows the type.
				if e := nameAfter(text, w.end, buf); e > 0 {
					end, weak = e, w.capital && f&wWeak != 0
				}
				break
			} else if f&stAfterName != 0 && w.capital && names > 0 {
				end, weak = nameEnd(text, w), f&wWeak != 0
				break
			}
		}
		if !w.capital && !isDirection(text[w.start:w.end]) || capsFunctionWord(text[w.start:w.end]) {
			break
		}
		names++
		if w.end >= len(text) || text[w.end] != ' ' {
			break
		}
		p = w.end + 1
	}
	if end < 0 {
		return 0, 0, false, false
	}
	return unitBefore(text, i, floor, buf), end, weak, true
}

func spanBackHSpace(text string, i int) int {
	for i > 0 && isHSpace(text[i-1]) {
		i--
	}
	return i
}

// isDirection reports whether w is a compass direction, which may stand
// before a street name: "455 W Harmon Rd".
func isDirection(w string) bool {
	switch strings.TrimSuffix(w, ".") {
	case "N", "S", "E", "W", "NE", "NW", "SE", "SW":
		return true
	}
	return false
}

// nameAfter reads a street name after a French street type: particles and
// at least one capitalized word, up to five words. It returns its end, or
// -1.
func nameAfter(text string, p int, buf *[maxAddrWord]byte) int {
	end := -1
	for n := 0; n < 6 && p < len(text) && text[p] == ' '; n++ {
		w, ok := addrWordAfter(text, p+1)
		if !ok {
			break
		}
		switch {
		case w.capital:
			if end = nameEnd(text, w); end < w.end {
				return end
			}
		case isParticle(buf, text, w):
		default:
			return end
		}
		p = w.end
	}
	return end
}

// isParticle reports whether w may stand inside a name: "de", "van",
// "l'Église".
func isParticle(buf *[maxAddrWord]byte, text string, w addrWord) bool {
	if w.end-w.start > 2 && text[w.start+1] == '\'' && (text[w.start]|0x20 == 'l' || text[w.start]|0x20 == 'd') {
		return true
	}
	return lex(buf, text, w)&wParticle != 0
}

// nameEnd returns where the name w ends: a '.' after it ends the sentence
// unless the name is an abbreviation ("St.").
func nameEnd(text string, w addrWord) int {
	if text[w.end-1] == '.' && w.end-w.start > 4 {
		return w.end - 1
	}
	return w.end
}

// unitBefore extends an address that starts at i back over a unit before
// it: "Flat 3, 42 Albion Road".
func unitBefore(text string, i, floor int, buf *[maxAddrWord]byte) int {
	p := i
	if p-2 < floor || text[p-1] != ' ' || text[p-2] != ',' {
		return i
	}
	p -= 2
	q := p
	for q > floor && isASCIIAlnum(text[q-1]) && p-q < 6 {
		q--
	}
	if q == p || !isASCIIDigit(text[q]) || q-1 <= floor || text[q-1] != ' ' {
		return i
	}
	if w, ok := addrWordBefore(text, q-1); ok && w.start >= floor && lex(buf, text, w)&wUnit != 0 {
		return w.start
	}
	return i
}

// What a street name read type first needs after its number to count.
const (
	needNothing  = iota
	needEnd      // a unit, postcode or region after it, or the end of a clause
	needPostcode // a postcode or region after it
)

// typeFirstStreet reads the street name that ends at e, before a house
// number: "Calle de Goya", "Lindenstraße", "Am Mühlbach".
func typeFirstStreet(text string, e, floor int, buf *[maxAddrWord]byte) (start, need int, ok bool) {
	names := 0
	for n := 0; n < 6; n++ {
		w, ok := addrWordBefore(text, e)
		if !ok || w.start < floor {
			return 0, 0, false
		}
		f := lex(buf, text, w)
		if f&stFirst != 0 && names > 0 {
			// "Calle de Goya", "via Roma".
			if f&stAmbiguous != 0 {
				return w.start, needEnd, true
			}
			return w.start, needNothing, true
		}
		if n == 0 && w.capital && w.end-w.start <= maxAddrWord && len(suffixByLast[text[w.end-1]|0x20]) > 0 {
			if amb, ok := streetSuffixFold(text[w.start:w.end]); ok {
				// "Lindenstraße"; a bare street word needs an adjective:
				// "Lange Straße", not "Ring 3".
				s := adjectiveBefore(text, w.start, floor, buf)
				switch {
				case amb:
					return s, needPostcode, true
				case s == w.start && f&stFirst != 0:
					// "Mariahilfer Straße 1,": any name before, if
					// the number ends a clause or a postcode follows.
					if p, ok := addrWordBefore(text, w.start-1); ok && p.start >= floor && p.capital && text[w.start-1] == ' ' {
						return p.start, needEnd, true
					}
					return 0, 0, false
				}
				return s, needNothing, true
			}
		}
		switch {
		case w.capital && f&wPreposition != 0 && names > 0:
			return w.start, needPostcode, true // "Am Mühlbach 7a"
		case w.capital:
			names++
		case isParticle(buf, text, w):
		default:
			return 0, 0, false
		}
		if names > 4 || w.start < 1 || text[w.start-1] != ' ' {
			return 0, 0, false
		}
		e = w.start - 1
	}
	return 0, 0, false
}

// suffixByLast lists the streetSuffixes by their last byte.
var suffixByLast = func() (t [256][]int) {
	for k, s := range streetSuffixes {
		t[s.s[len(s.s)-1]] = append(t[s.s[len(s.s)-1]], k)
	}
	return t
}()

// streetSuffix reports whether a word ends in a street suffix (and whether
// that suffix is also an English word ending).
func streetSuffix(lw string) (ambiguous, ok bool) {
	if len(lw) < 3 {
		return false, false
	}
	for _, k := range suffixByLast[lw[len(lw)-1]] {
		if s := streetSuffixes[k]; strings.HasSuffix(lw, s.s) {
			return s.ambiguous, true
		}
	}
	return false, false
}

// adjectiveBefore extends a street name at s back over an adjective.
func adjectiveBefore(text string, s, floor int, buf *[maxAddrWord]byte) int {
	if s-1 <= floor || text[s-1] != ' ' {
		return s
	}
	if w, ok := addrWordBefore(text, s-1); ok && w.start >= floor && w.capital && lex(buf, text, w)&wAdjective != 0 {
		return w.start
	}
	return s
}

// spanShort is spanWhile for the short parts of addresses, bounded so that
// a long run of digits or capitals costs each number near it a constant;
// every part it reads is shorter than the bound.
func spanShort(text string, i int, ok func(byte) bool) int {
	e := i
	for e < len(text) && e-i < 16 && ok(text[e]) {
		e++
	}
	return e
}

// addressTail extends an address that ends at e over the parts after it:
// units, a city, a region code and a postcode, in the orders countries
// write them. A city counts when a postcode or region code follows it
// (", Columbus, OH 43215"), after a postcode ("10115 Berlin"), or when it
// ends the clause (", Ottawa."). post reports whether a postcode or region
// code was found.
func addressTail(text string, e int, buf *[maxAddrWord]byte) (end int, post bool) {
	end = e
	p, city, cityFrom := e, false, -1
	for seg := 0; seg < 7; seg++ {
		q, ok := tailSep(text, p)
		if !ok {
			break
		}
		if !city {
			cityFrom = p
		}
		if x := postcodeSegment(text, q, buf); x > 0 {
			end, p, post, city = x, x, true, false
			continue
		}
		if x := regionSegment(text, q, city); x > 0 {
			end, p, post, city = x, x, true, false
			continue
		}
		if x := ukPostcode(text, q); x > 0 {
			end, p, post, city = x, x, true, false
			continue
		}
		if !city {
			if x := unitSegment(text, q, buf); x > 0 {
				end, p = x, x
				continue
			}
		}
		if x := cityName(text, q, 3, buf); x > 0 {
			p, city = x, true
			continue
		}
		break
	}
	// A city right after the street that ends the clause is part of it:
	// "24 Sussex Drive, Ottawa.".
	if city && cityFrom == end && text[end] == ',' && endsClause(text, p) {
		end = p
	}
	return end, post
}

// tailSep skips the separator between two parts of an address: ", ", ",",
// " - ", a space or a line break. It returns where the next part starts.
func tailSep(text string, p int) (int, bool) {
	if p >= len(text) {
		return p, false
	}
	switch text[p] {
	case ',':
		p++
		if p < len(text) && (text[p] == ' ' || text[p] == '\n') {
			p++
		}
	case ' ':
		p++
		if p+1 < len(text) && text[p] == '-' && text[p+1] == ' ' {
			p += 2
		}
	case '\n':
		p++
	default:
		return p, false
	}
	return p, p < len(text) && text[p] != ' '
}

// unitSegment reads a unit at q: "Apt 4B", "Suite 200", "#12", "ap. 92",
// "2o izquierda" (NFKC reads "2º" so), "3e étage", "2nd floor".
func unitSegment(text string, q int, buf *[maxAddrWord]byte) int {
	if text[q] == '#' {
		return unitToken(text, spanShort(text, q+1, isHSpace))
	}
	if isASCIIDigit(text[q]) {
		d := spanShort(text, q, isASCIIDigit)
		if d-q > 3 {
			return -1
		}
		e := spanShort(text, d, isASCIILetter)
		if e-d > 2 || e >= len(text) || text[e] != ' ' {
			return -1
		}
		if w, ok := addrWordAfter(text, e+1); ok && lex(buf, text, w)&wFloor != 0 {
			return w.end
		}
		return -1
	}
	w, ok := addrWordAfter(text, q)
	if !ok || lex(buf, text, w)&wUnit == 0 {
		return -1
	}
	return unitToken(text, spanShort(text, w.end, isHSpace))
}

// unitToken reads the number of a unit: up to six letters and digits with
// a digit, or one capital letter ("Flat A").
func unitToken(text string, p int) int {
	e := spanShort(text, p, isASCIIAlnum)
	if e == p || e-p > 6 || isWordAt(text, e) {
		return -1
	}
	if !hasASCIIDigit(text[p:e]) && !(e-p == 1 && text[p] >= 'A' && text[p] <= 'Z') {
		return -1
	}
	return e
}

// postcodeSegment reads a postcode and the city after it: "10115 Berlin",
// "D-10115 Berlin", "3512 PJ Utrecht", "4000-447 Porto", "01310-200",
// "00-950 Warszawa". Four digits alone are a year: they need the city.
func postcodeSegment(text string, q int, buf *[maxAddrWord]byte) int {
	p := q
	if l := spanShort(text, p, func(c byte) bool { return c >= 'A' && c <= 'Z' }); l-p >= 1 && l-p <= 2 && l+1 < len(text) && text[l] == '-' && isASCIIDigit(text[l+1]) {
		p = l + 1 // a country prefix
	}
	d := spanShort(text, p, isASCIIDigit)
	n, e := d-p, d
	needCity := false
	switch {
	case n == 5:
		if e+1 < len(text) && text[e] == '-' && isASCIIDigit(text[e+1]) {
			f := spanShort(text, e+1, isASCIIDigit)
			if f-e-1 != 3 && f-e-1 != 4 {
				return -1
			}
			e = f
		}
	case n == 4:
		switch {
		case e+1 < len(text) && text[e] == '-' && isASCIIDigit(text[e+1]):
			if f := spanShort(text, e+1, isASCIIDigit); f-e-1 == 3 {
				e = f
			} else {
				return -1
			}
		case e+3 <= len(text) && text[e] == ' ' && isUpperPair(text, e+1) && !isWordAt(text, e+3):
			e += 3 // Dutch "3512 PJ"
		default:
			needCity = true
		}
	case n == 2 && e+4 <= len(text) && text[e] == '-' && spanShort(text, e+1, isASCIIDigit) == e+4:
		e += 4
	default:
		return -1
	}
	if e < len(text) && (isWordAt(text, e) || ((text[e] == '.' || text[e] == ',' || text[e] == '-' || text[e] == ':' || text[e] == '/') && e+1 < len(text) && isASCIIDigit(text[e+1]))) {
		return -1
	}
	if e+1 < len(text) && text[e] == ' ' {
		if c := cityName(text, e+1, 2, buf); c > 0 {
			return c
		}
	}
	if needCity {
		return -1
	}
	return e
}

func isUpperPair(text string, p int) bool {
	return p+2 <= len(text) && text[p] >= 'A' && text[p] <= 'Z' && text[p+1] >= 'A' && text[p+1] <= 'Z'
}

// regionSegment reads a US state, Canadian province or Brazilian state
// code and the ZIP or postal code after it: "OH 43215", "ON K1A 0B1". A
// code alone counts only after a city ("São Paulo - SP").
func regionSegment(text string, q int, afterCity bool) int {
	e := spanShort(text, q, func(c byte) bool { return c >= 'A' && c <= 'Z' })
	if e-q < 2 || e-q > 3 || isWordAt(text, e) || !regionCodes[text[q:e]] {
		return -1
	}
	if e+1 < len(text) && text[e] == ' ' {
		z := e + 1
		d := spanShort(text, z, isASCIIDigit)
		if d-z == 5 || (d-z == 4 && e-q == 3) {
			if d+1 < len(text) && text[d] == '-' && spanShort(text, d+1, isASCIIDigit) == d+5 {
				d += 5
			}
			if !isWordAt(text, d) {
				return d
			}
		}
		if c := canadianPostcode(text, z); c > 0 {
			return c
		}
	}
	if afterCity {
		return e
	}
	return -1
}

// canadianPostcode reads "K1A 0B1" at p.
func canadianPostcode(text string, p int) int {
	if p+7 > len(text) || text[p+3] != ' ' {
		return -1
	}
	for k, c := range []byte(text[p : p+7]) {
		switch k {
		case 0, 2, 5:
			if c < 'A' || c > 'Z' {
				return -1
			}
		case 1, 4, 6:
			if !isASCIIDigit(c) {
				return -1
			}
		}
	}
	if isWordAt(text, p+7) {
		return -1
	}
	return p + 7
}

// ukPostcode reads a British postcode at p: "SW1A 2AA", "NR4 7TJ", "M1 1AE".
func ukPostcode(text string, p int) int {
	l := spanShort(text, p, func(c byte) bool { return c >= 'A' && c <= 'Z' })
	if l-p < 1 || l-p > 2 || l >= len(text) || !isASCIIDigit(text[l]) {
		return -1
	}
	e := l + 1
	if e < len(text) && isUpperOrDigit(text[e]) {
		e++
	}
	if e+4 > len(text) || text[e] != ' ' || !isASCIIDigit(text[e+1]) || !isUpperPair(text, e+2) || isWordAt(text, e+4) {
		return -1
	}
	return e + 4
}

// cityName reads a place name at p: up to maxCaps capitalized words, with
// particles between them ("Frankfurt am Main", "Rio de Janeiro").
func cityName(text string, p, maxCaps int, buf *[maxAddrWord]byte) int {
	end, caps := -1, 0
	for n := 0; n < 2*maxCaps && p < len(text); n++ {
		w, ok := addrWordAfter(text, p)
		if !ok {
			break
		}
		f := lex(buf, text, w)
		switch {
		case ukPostcode(text, w.start) > 0 || regionCodes[text[w.start:w.end]]:
			return end // "Norwich NR4 7TJ", "Columbus OH 43215"
		case w.capital && f&wUnit == 0:
			if caps == maxCaps {
				return end
			}
			caps++
			if end = nameEnd(text, w); end < w.end {
				return end // "Ottawa." ends the sentence
			}
		case f&wParticle != 0 && caps > 0:
		default:
			return end
		}
		if w.end+1 >= len(text) || text[w.end] != ' ' {
			break
		}
		p = w.end + 1
	}
	return end
}

// capsFunctionWord reports whether w is a preposition or article in
// capitals, which a street name between a house number and its street
// word does not hold but an all-caps log line does ("WROTE 12 ROWS TO LANE
// B", "COPY 5 FILES TO DRIVE D").
func capsFunctionWord(w string) bool {
	switch w {
	case "TO", "ON", "IN", "AT", "OF", "FOR", "FROM", "BY", "INTO", "ONTO", "WITH", "AND", "OR", "THE", "A", "AN", "IS", "ARE", "WAS":
		return true
	}
	return false
}
