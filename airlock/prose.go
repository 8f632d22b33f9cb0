package airlock

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Passwords stated in prose: "my password is hunter2", "mi contraseña es
// gatito99", "Mein Passwort lautet Sommer2024!", "我的密码是abc12345",
// "मेरा पासवर्ड hunter2 है", "I set the password to ...", "logged in with
// the password 'letmein'". findKeyValues has the "password: x" and
// "password=x" forms; findProsePasswords has the sentences.
//
// A password keyword of the eight languages the connectors below know
// (English, Spanish, German, French, Portuguese, Italian, Chinese, Hindi)
// is followed, on the same line, by one of:
//
//   - the value itself ("the password hunter2", "mera password X hai",
//     "comme mot de passe X"): apposition;
//   - a chain of connector words, the last able to introduce a value
//     ("is", "was set to", "ist jetzt", "lautet", "c'est", "é", "è",
//     "है", "是", "改成"), then the value;
//   - a short relative or prepositional phrase and then such a chain ("the
//     password for the admin account is X", "la contraseña que puse fue
//     X").
//
// The value is judged, because prose about passwords is far more common
// than passwords in prose ("my password is wrong / too short / abgelaufen
// / refusé / सही है"), and a found value is replaced everywhere. It
// counts when it is:
//
//   - quoted, not a stop word, and without spaces unless it also has a
//     digit or a symbol ("'letmein'", but not 'is "expired"');
//   - or it has a digit or a symbol other than a hyphen, apostrophe or dot
//     between letters ("Marigold#442", "ravenclaw1987", "Galet-Bleu-62");
//   - or, after a connector, it mixes case inside a word of six letters or
//     more that is not a product name ("fjordTulip", not "JavaScript");
//   - or it is a Latin word of five letters or more, not a stop word,
//     stated in Chinese or Hindi text, where an English adjective is
//     unlikely and a Latin word is the value ("密码是 sunshine").
//
// A plain word in Latin-script prose never counts unquoted: "my password
// is sunshine" stays, because no stop list of adjectives and participles
// in six languages is complete, and "my password is visible / stored /
// Pflicht" must stay. Nor do values of fewer than four characters,
// numbers with a unit ("8 characters", "100%", "8-stellig", "8 位"), hash
// names ("SHA256", "bcrypt-hashed"), templates ("<password>",
// "$PASSWORD"), column types ("password VARCHAR(255)") or, in apposition,
// versions and dates ("password 2.4.1").
//
// An unquoted value runs to a space, a quote, or Chinese or Devanagari
// text; sentence punctuation after it stays ("is Sommer2024!" keeps its
// "!" in the text), inside quotes it goes with the value.

// proseKeywordWords are the password keywords of secretKeywords that
// findProsePasswords looks for: the ones of the languages its connectors
// know. "parola" (Italian for "word") and "pass" are too common as words;
// "mdp" (French shorthand) would cost the scan a fourth pair.
var proseKeywordWords = [...]string{
	"password", "passwd", "passphrase", "passcode", "passwort", "kennwort",
	"contraseña", "contrasena", "contrasenya", "mot de passe", "senha", "palavra-passe",
	"密码", "密碼", "口令", "पासवर्ड",
}

// proseKeyword is a keyword with where findProsePasswords finds it from.
type proseKeyword struct {
	kw     *secretKeyword
	anchor int // offset of its anchor pair (ASCII words) or byte (others)
}

// proseAnchors are the lower-case byte pairs proseNextAnchor looks for:
// every ASCII keyword contains one. "as" is in password, passwd,
// passphrase, passcode, passwort, contraseña and mot de passe; "nw" in
// kennwort; "nh" in senha.
var proseAnchors = [...]string{"as", "nw", "nh"}

var proseByAnchor, proseSearched = func() (byAnchor [len(proseAnchors)][]proseKeyword, searched []proseKeyword) {
	for _, w := range proseKeywordWords {
		var kw *secretKeyword
		for i := range secretKeywords {
			if secretKeywords[i].word == w && secretKeywords[i].kind == kPassword {
				kw = &secretKeywords[i]
			}
		}
		if kw == nil {
			panic("airlock: prose keyword not among secretKeywords: " + w)
		}
		pk := proseKeyword{kw: kw, anchor: -1}
		for a, pair := range proseAnchors {
			if i := strings.Index(w, pair); i >= 0 && pk.anchor < 0 {
				pk.anchor = i
				byAnchor[a] = append(byAnchor[a], pk)
			}
		}
		if pk.anchor < 0 {
			if w[0] < utf8.RuneSelf {
				panic("airlock: ASCII prose keyword without an anchor: " + w)
			}
			// A byte rare in Chinese, Japanese and Hindi text: not the
			// middle byte of a kana (0x80-0x83) or of a Devanagari letter
			// (0xA4, 0xA5), which such text is full of.
			common := func(c byte) bool { return c <= 0x83 || c == 0xA4 || c == 0xA5 }
			for pk.anchor = 1; common(w[pk.anchor]); {
				if pk.anchor == 1 {
					pk.anchor = len(w)
				}
				pk.anchor--
			}
			searched = append(searched, pk)
		}
	}
	// Longest first, so that "mot de passe" wins over a shorter word.
	for _, ks := range byAnchor {
		for i := 1; i < len(ks); i++ {
			for j := i; j > 0 && len(ks[j].kw.word) > len(ks[j-1].kw.word); j-- {
				ks[j], ks[j-1] = ks[j-1], ks[j]
			}
		}
	}
	return byAnchor, searched
}()

// proseByAnchorPrev indexes proseByAnchor by the lower-cased byte before
// the anchor as well ('p' in "password", 'r' in "contraseña"), so that the
// anchors of common words ("was", "class") are dismissed at once.
var proseByAnchorPrev = func() (t [len(proseAnchors)][256][]proseKeyword) {
	for a, ks := range proseByAnchor {
		for _, pk := range ks {
			if pk.anchor < 1 {
				panic("airlock: prose keyword starts with its anchor: " + pk.kw.word)
			}
			prev := pk.kw.word[pk.anchor-1]
			t[a][prev] = append(t[a][prev], pk)
		}
	}
	return t
}()

// findProsePasswords finds passwords stated in sentences (see above).
func findProsePasswords(text string, spans []redSpan) []redSpan {
	var high uint64
	next := 0 // end of the last match: nothing before it is read again
	for i := 0; i < len(text); i++ {
		var h uint64
		i, h = proseNextAnchor(text, i)
		high |= h
		if i >= next && i+1 < len(text) {
			spans, next = proseAt(text, i, spans, next)
		}
	}
	if high&swarHighs == 0 {
		return spans
	}
	// The Chinese and Hindi keywords are found from a byte of theirs that
	// is rare in such text, when the text has their first byte at all.
	var lead [256]int8 // 1: in the text, -1: not
	for _, pk := range proseSearched {
		w := pk.kw.word
		if lead[w[0]] == 0 {
			lead[w[0]] = -1
			if strings.IndexByte(text, w[0]) >= 0 {
				lead[w[0]] = 1
			}
		}
		if lead[w[0]] < 0 {
			continue
		}
		for off := pk.anchor; off < len(text); {
			j := strings.IndexByte(text[off:], w[pk.anchor])
			if j < 0 {
				break
			}
			start := off + j - pk.anchor
			off += j + 1
			if !strings.HasPrefix(text[start:], w) {
				continue
			}
			if s, ok := proseValueAfter(text, start, start+len(w), pk.kw); ok {
				spans = appendSorted(spans, s)
				off = max(off, s.end+pk.anchor)
			}
		}
	}
	return spans
}

// proseNextAnchor returns the position of the first anchor pair at or
// after i, in any case, or len(text), and the bytes it read ORed together
// (their high bit says whether the text has a non-ASCII byte; the last
// window may reread a few bytes before i, which does not matter). It reads
// eight bytes a step with a few operations per pair: the pairs are rare,
// and this scan is most of the cost of findProsePasswords, hence only
// three pairs, the "n" of two of them tested once, and a loop the
// compiler needs no bounds checks in.
func proseNextAnchor(text string, i int) (int, uint64) {
	const fold = 0x2020202020202020 // A-Z to a-z; no other byte becomes a lower-case letter
	const (
		a0, s1 = 'a' * swarOnes, 's' * swarOnes
		n0     = 'n' * swarOnes
		w1, h1 = 'w' * swarOnes, 'h' * swarOnes
	)
	var high uint64
	s := text[i:]
	for len(s) >= 9 {
		// As proseAnchorMask, which the compiler does not inline.
		x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		y := x>>8 | uint64(s[8])<<56
		high |= x
		x, y = x|fold, y|fold
		ta := (x ^ a0) | (y ^ s1)
		tn := x ^ n0
		tw := tn | (y ^ w1)
		th := tn | (y ^ h1)
		m := ((ta - swarOnes) &^ ta) | ((tw - swarOnes) &^ tw) | ((th - swarOnes) &^ th)
		if m &= swarHighs; m != 0 {
			return len(text) - len(s) + bits.TrailingZeros64(m)/8, high
		}
		s = s[8:]
	}
	if len(s) < 2 {
		if len(s) == 1 {
			high |= uint64(s[0])
		}
		return len(text), high
	}
	if len(text) >= 9 {
		// The last nine bytes, less those already read.
		w := text[len(text)-9:]
		m, x := proseAnchorMask(w)
		done := 9 - len(s)
		m &^= 1<<(8*done) - 1
		high |= x | uint64(w[8])
		if m != 0 {
			return len(text) - 9 + bits.TrailingZeros64(m)/8, high
		}
		return len(text), high
	}
	for k := 0; k+1 < len(s); k++ {
		high |= uint64(s[k])
		if isProseAnchor(s[k], s[k+1]) {
			return len(text) - len(s) + k, high | uint64(s[k+1])
		}
	}
	return len(text), high | uint64(s[len(s)-1])
}

// proseAnchorMask returns the high bit of each of the first eight bytes of
// s (len(s) >= 9) that may start an anchor pair, and those bytes.
func proseAnchorMask(s string) (m, x uint64) {
	const fold = 0x2020202020202020 // A-Z to a-z; no other byte becomes a lower-case letter
	const (
		a0, s1 = 'a' * swarOnes, 's' * swarOnes
		n0     = 'n' * swarOnes
		w1, h1 = 'w' * swarOnes, 'h' * swarOnes
	)
	_ = s[8]
	x = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	y := x>>8 | uint64(s[8])<<56 // the byte after each
	xf, yf := x|fold, y|fold
	ta := (xf ^ a0) | (yf ^ s1)
	tn := xf ^ n0
	tw := tn | (yf ^ w1)
	th := tn | (yf ^ h1)
	// The high bit of each zero byte of ta, tw or th, and perhaps of a
	// byte above one: proseAt checks every position it is given.
	m = ((ta - swarOnes) &^ ta) | ((tw - swarOnes) &^ tw) | ((th - swarOnes) &^ th)
	return m & swarHighs, x
}

func isProseAnchor(c0, c1 byte) bool {
	c0, c1 = c0|0x20, c1|0x20
	for _, p := range proseAnchors {
		if c0 == p[0] && c1 == p[1] {
			return true
		}
	}
	return false
}

// proseAt tries the keywords anchored at the pair at b.
func proseAt(text string, b int, spans []redSpan, next int) ([]redSpan, int) {
	if b == 0 {
		return spans, next
	}
	c0, c1, prev := text[b]|0x20, text[b+1]|0x20, text[b-1]|0x20
	for a, p := range proseAnchors {
		if c0 != p[0] || c1 != p[1] {
			continue
		}
		for _, pk := range proseByAnchorPrev[a][prev] {
			w := pk.kw.word
			start := b - pk.anchor
			end := start + len(w)
			if start < next || end > len(text) || text[start]|0x20 != w[0] || text[end-1]|0x20 != w[len(w)-1] ||
				!strings.EqualFold(text[start:end], w) {
				continue
			}
			if s, ok := proseValueAfter(text, start, end, pk.kw); ok {
				// A value read before its keyword may reach back into the
				// previous match: appendSorted keeps the spans disjoint.
				return appendSorted(spans, s), max(next, s.end)
			}
			return spans, next
		}
	}
	return spans, next
}

// proseValueAfter reads what follows the keyword text[start:end].
func proseValueAfter(text string, start, end int, kw *secretKeyword) (redSpan, bool) {
	if !keyStart(text, start, kw) || insidePlaceholder(text, start) {
		return redSpan{}, false
	}
	cjkText := kw.cjk || isDevanagariKeyword(kw.word)
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if isCJKRune(r) {
			// "我的密码是abc12345", "我的password是abc12345".
			return cjkValueAfter(text, end)
		}
		if !kw.cjk && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_') {
			return redSpan{}, false // "passwords", "passwort123"
		}
	}
	if kw.cjk {
		return cjkValueAfter(text, end)
	}
	if s, ok := wordsValueAfter(text, end, cjkText); ok {
		return s, true
	}
	return wordsValueBefore(text, start, end)
}

// wordsValueBefore reads a value stated before the keyword: "Tr0ub4dor&3
// is my password.", "I used 'letmein' as the password and ...". The
// keyword must end its clause, so that "1Password as my password
// manager" stays; the value is judged as strictly as in apposition.
func wordsValueBefore(text string, start, end int) (redSpan, bool) {
	q := spanWhile(text, end, isHSpace)
	if q < len(text) && strings.IndexByte(".,;:!?()\n\r", text[q]) < 0 {
		e, lim := q, min(len(text), q+maxProseValue)
		for e < lim && !isProseSpace(text[e]) && strings.IndexByte(".,;:!?)", text[e]) < 0 {
			e++
		}
		if !proseClauseEnd[strings.ToLower(text[q:e])] {
			return redSpan{}, false
		}
	}
	// Back over up to two determiners, then the connector.
	p := start
	for n := 0; ; n++ {
		ws, we := prevWord(text, p)
		if ws < 0 {
			return redSpan{}, false
		}
		w := strings.ToLower(text[ws:we])
		if n < 2 && proseDeterminers[w] {
			p = ws
			continue
		}
		if !proseBeforeConnectors[w] {
			return redSpan{}, false
		}
		p = ws
		break
	}
	vs, ve := prevWord(text, p)
	if vs < 0 {
		return redSpan{}, false
	}
	quoted := false
	if r, size := utf8.DecodeRuneInString(text[vs:]); openingQuote(r) != 0 {
		if c, csize := utf8.DecodeLastRuneInString(text[vs:ve]); ve-vs > size+csize && (c == openingQuote(r) || r == '„' && c == '“') {
			vs, ve, quoted = vs+size, ve-csize, true
		}
	}
	return proseJudge(text, vs, ve, quoted, true, false)
}

// prevWord returns the word that ends, before spaces, at p on the same
// line, or -1.
func prevWord(text string, p int) (int, int) {
	we := p
	for we > 0 && isHSpace(text[we-1]) {
		we--
	}
	if we == p || we == 0 {
		return -1, -1
	}
	// Words are short; a longer run is no word of a sentence, and reading
	// it whole at every keyword inside it would be quadratic.
	ws, lim := we, max(0, we-maxProseValue-1)
	for ws > lim && !isProseSpace(text[ws-1]) {
		ws--
	}
	if ws == lim && lim > 0 && !isProseSpace(text[ws-1]) {
		return -1, -1
	}
	return ws, we
}

var (
	// proseClauseEnd may follow a keyword that ends its clause.
	proseClauseEnd = wordSet("and but or too also now anymore again then so y pero o también ahora und aber oder auch jetzt " +
		"et mais ou aussi maintenant e mas ou também agora ma però o anche ora aur lekin par bhi और लेकिन पर भी")
	// proseDeterminers may stand between the connector and the keyword.
	proseDeterminers = wordSet("my the our your his her their a new old current actual " +
		"mi la el su tu nueva nuevo mein meine das ein neues mon ma le son nouveau " +
		"minha meu a o sua nova mia il mio nuova mera meri")
	// proseBeforeConnectors join a value to the keyword after it.
	proseBeforeConnectors = wordSet("is was as ist war als es era fue como est était comme é foi è come hai tha")
)

func isDevanagariKeyword(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.Is(unicode.Devanagari, r)
}

// Connector classes of the words between a keyword and its value.
const (
	cnFinal   = 1 << iota // may introduce the value: "is", "lautet", "to"
	cnFiller              // may stand in a chain: "now", "set", "been"
	cnGap                 // starts a phrase that may precede a chain: "for", "que"
	cnPostAdj             // an adjective after the keyword: "nueva", "actuel"
)

var proseConnectors = func() map[string]uint8 {
	m := map[string]uint8{}
	add := func(class uint8, words string) {
		for _, w := range strings.Fields(words) {
			m[w] |= class
		}
	}
	add(cnFinal, // copulas and verbs that state the value
		"is was are were be reads remains became becomes "+ // en
			"es era fue sea será sería siendo queda quedó "+ // es
			"ist war lautet lautete heißt hieß wäre bleibt "+ // de
			"est était c'est c’est sera serait reste devient "+ // fr
			"é era foi será seria continua virou fica ficou "+ // pt
			"è era fu sarà sarebbe rimane resta diventa "+ // it
			"है था थी hai tha thi") // hi
	add(cnFinal|cnGap, // prepositions that introduce the new value, or a phrase
		"to as a en à para pra auf zu pour per को")
	add(cnFiller,
		"now still currently always just actually literally simply exactly also again probably either set changed "+
			"updated reset been has had got "+
			"ahora todavía aún sigue siempre ya actualmente cambiada cambiado "+
			"jetzt noch immer nun aktuell gerade momentan "+
			"maintenant toujours encore actuellement changé "+
			"agora ainda sempre atualmente já "+
			"ora ancora sempre adesso attualmente già "+
			"ab abhi ab bhi अब भी अभी")
	add(cnGap, // relative pronouns, subjects and prepositions
		"that which i we you he she they for on of from at in with "+
			"que del de con en "+
			"die das den dass für von bei mit im "+
			"qui du pour sur avec "+
			"do da dos das com no na "+
			"che di della del su con per "+
			"का की के")
	add(cnPostAdj,
		"new old current temporary initial default "+
			"nueva nuevo actual antigua vieja temporal inicial "+
			"neues neue alte aktuelle "+
			"nouveau actuel ancien temporaire provisoire initial "+
			"nova atual antiga velha temporária provisória padrão "+
			"nuova attuale vecchia provvisoria temporanea iniziale "+
			"naya purana")
	return m
}()

// zhConnectors introduce the value after a Chinese keyword, longest first
// where one is the start of another.
var zhConnectors = [...]string{
	"设置成了", "设置为", "設置為", "设置成", "一直是", "应该是", "應該是", "仍然是", "依然是", "现在是", "現在是",
	"用的是", "写的是", "输入的是", "填的是", "设的是", "改成了", "改为了", "改成", "改为", "改為", "设为", "設為", "设成", "換成", "换成",
	"变成", "變成", "还是", "還是", "就是", "也是", "都是", "是", "为", "為",
}

const maxProseWords = 10

// wordsValueAfter reads the words after a keyword in a language that
// spaces its words, up to the end of the line.
func wordsValueAfter(text string, p int, cjkText bool) (redSpan, bool) {
	armed, inGap, gapLen := false, false, 0
	for _, s := range [...]string{"'s ", "’s "} {
		if strings.HasPrefix(text[p:], s) {
			p, armed = p+len(s)-1, true // "my password's hunter2"
		}
	}
	for n := 0; n < maxProseWords; n++ {
		q := spanWhile(text, p, isHSpace)
		if q == p || q >= len(text) {
			return redSpan{}, false
		}
		if n == 0 || armed {
			if s, ok := proseValue(text, q, n == 0 && !armed, cjkText); ok {
				return s, true
			}
		}
		e := q
		for e < len(text) && !isProseSpace(text[e]) {
			e++
		}
		w := text[q:e]
		t := strings.TrimRight(w, ".,;!?)")
		clause := len(t) < len(w)
		c := connectorClass(strings.TrimSuffix(t, ":"))
		switch {
		case c&cnFinal != 0:
			armed = true
			if c&cnGap != 0 && !inGap {
				inGap, gapLen = true, 0
			}
		case c&cnFiller != 0:
		case c&cnGap != 0 || inGap:
			if inGap = true; gapLen >= 4 {
				return redSpan{}, false
			}
			gapLen++
			armed = false
		case n == 0 && c&cnPostAdj != 0:
		default:
			return redSpan{}, false
		}
		if clause {
			return redSpan{}, false
		}
		p = e
	}
	return redSpan{}, false
}

// connectorClass returns the connector classes of word, in any case.
func connectorClass(word string) uint8 {
	var buf [16]byte
	if len(word) > len(buf) {
		return 0 // longer than any connector
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c >= utf8.RuneSelf {
			return proseConnectors[strings.ToLower(word)]
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return proseConnectors[string(buf[:len(word)])]
}

func isProseSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// cjkValueAfter reads the value after a keyword followed by Chinese text:
// a connector ("是", "改成") or none, then the value.
func cjkValueAfter(text string, p int) (redSpan, bool) {
	p = spanWhile(text, p, isHSpace)
	apposition := true
	for _, c := range zhConnectors {
		if strings.HasPrefix(text[p:], c) {
			p, apposition = p+len(c), false
			break
		}
	}
	p = spanWhile(text, p, isHSpace)
	if !apposition {
		if strings.HasPrefix(text[p:], ":") {
			p = spanWhile(text, p+1, isHSpace)
		} else if strings.HasPrefix(text[p:], "：") {
			p = spanWhile(text, p+len("："), isHSpace)
		}
	}
	if p >= len(text) {
		return redSpan{}, false
	}
	if r, _ := utf8.DecodeRuneInString(text[p:]); r >= utf8.RuneSelf && openingQuote(r) == 0 {
		return redSpan{}, false // "密码错误", "密码为空"
	}
	return proseValue(text, p, apposition, true)
}

// openingQuote returns the closing quote of an opening quote r, or 0.
func openingQuote(r rune) rune {
	switch r {
	case '"', '\'', '`':
		return r
	case '“', '„':
		return '”'
	case '‘', '‚':
		return '’'
	case '«':
		return '»'
	case '‹':
		return '›'
	case '「':
		return '」'
	case '『':
		return '』'
	case '”':
		return '”'
	}
	return 0
}

// isCJKRune reports whether r is a Chinese, Japanese or Korean character
// or punctuation mark, which ends an unquoted value.
func isCJKRune(r rune) bool {
	return r >= 0x2E80 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF))
}

// proseValueStop reports whether r ends an unquoted value.
func proseValueStop(r rune) bool {
	switch r {
	case '"', '\'', '`', '<', '“', '”', '‘', '’', '«', '»', '„', '‹', '›':
		return true
	}
	return unicode.IsSpace(r) || isCJKRune(r) || unicode.Is(unicode.Devanagari, r) || r == utf8.RuneError
}

// proseValue reads and judges the value at q.
func proseValue(text string, q int, apposition, cjkText bool) (redSpan, bool) {
	r, size := utf8.DecodeRuneInString(text[q:])
	if closer := openingQuote(r); closer != 0 {
		lim := min(len(text), q+size+maxQuoted)
		e := strings.IndexRune(text[q+size:lim], closer)
		if r == '„' && e < 0 {
			e = strings.IndexRune(text[q+size:lim], '“') // German quotes
		}
		if e > 0 {
			vs, ve := q+size, q+size+e
			if strings.IndexByte(text[vs:ve], '\n') < 0 {
				// French spaces inside its guillemets: « Soleil42 ».
				vs, ve = spanWhile(text, vs, isHSpace), ve-len(text[vs:ve])+len(strings.TrimRight(text[vs:ve], " \t"))
				if vs < ve {
					return proseJudge(text, vs, ve, true, apposition, cjkText)
				}
			}
		}
		q += size // unclosed: read on as unquoted
	}
	ve := q
	// A value is at most maxProseValue bytes: reading further would make a
	// text of keywords in one long run quadratic.
	lim := min(len(text), q+maxProseValue+1)
	for ve < lim {
		if c := text[ve]; c < utf8.RuneSelf {
			// An apostrophe between letters or digits is part of the
			// value ("L'hiver#2026"), not a quote that ends it.
			if c == '\'' && ve > q && ve+1 < len(text) && isASCIIAlnum(text[ve-1]) && isASCIIAlnum(text[ve+1]) {
				ve++
				continue
			}
			// '<' ends a value where a tag starts ("abc123</p>"), not
			// inside one ("Tr0ub<4dor").
			if isProseSpace(c) || isQuoteByte(c) || c == '<' && ve > q && ve+1 < len(text) && (isASCIILetter(text[ve+1]) || text[ve+1] == '/') {
				break
			}
			ve++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[ve:])
		if proseValueStop(r) {
			break
		}
		ve += size
	}
	// Sentence punctuation after the value is not part of it; a bracket
	// closes only what the value opened.
	for ve > q {
		c := text[ve-1]
		if strings.IndexByte(".,;:!?…", c) >= 0 || (c == ')' && strings.IndexByte(text[q:ve], '(') < 0) ||
			(c == ']' && strings.IndexByte(text[q:ve], '[') < 0) || (c == '}' && strings.IndexByte(text[q:ve], '{') < 0) {
			ve--
			continue
		}
		if strings.HasSuffix(text[q:ve], "…") {
			ve -= len("…")
			continue
		}
		break
	}
	return proseJudge(text, q, ve, false, apposition, cjkText)
}

// proseJudge decides whether text[vs:ve] is a password (see the rule at
// the top of this file).
func proseJudge(text string, vs, ve int, quoted, apposition, cjkText bool) (redSpan, bool) {
	v := text[vs:ve]
	no := redSpan{}
	if len(v) < 4 || len(v) > maxProseValue {
		return no, false
	}
	// Placeholders a reporter typed next to a password ("Tr0ub4dor&3[email]")
	// must not hide it: the value is judged without them and, when it
	// counts, replaced with them. A value that is only placeholders is
	// done.
	if strings.IndexByte(v, '[') >= 0 {
		if bare, ok := withoutPlaceholders(v); ok {
			// Only a few bytes after the value matter to the judge (a unit
			// such as "8 characters"); passing the whole rest of the text
			// would make a run of such values quadratic.
			if _, ok := proseJudge(bare+text[ve:min(len(text), ve+proseAfterContext)], 0, len(bare), quoted, apposition, cjkText); ok {
				return redSpan{vs, ve, kPassword}, true
			}
			return no, false
		}
	}
	// A password in brackets: "my password is (Tr0ub4dor&3)". The inside
	// counts only with a digit, which templates ("<PASSWORD_HERE>",
	// "{password}") do not have.
	if len(v) > 2 && (v[0] == '(' && v[len(v)-1] == ')' || v[0] == '[' && v[len(v)-1] == ']' || v[0] == '{' && v[len(v)-1] == '}' || v[0] == '<' && v[len(v)-1] == '>') {
		if in := v[1 : len(v)-1]; hasASCIIDigit(in) && strings.IndexAny(in, "()[]{}<> ") < 0 {
			if s, ok := proseJudge(text, vs+1, ve-1, quoted, apposition, cjkText); ok {
				return s, true
			}
		}
		return no, false
	}
	var digits, letters, upperAfterLower, spaces int
	symbol, lowerSeen, hyphen, prevLetter := false, false, false, false
	for _, r := range v {
		letter := false
		switch {
		case r < utf8.RuneSelf && byteClass[r]&cDigit != 0, r >= utf8.RuneSelf && unicode.IsDigit(r):
			digits++
		case r < utf8.RuneSelf && byteClass[r]&(cUpper|cLower) != 0, r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsMark(r)):
			letters++
			letter = true
			upper := r < utf8.RuneSelf && byteClass[r]&cUpper != 0 || r >= utf8.RuneSelf && unicode.IsUpper(r)
			if upper && lowerSeen && prevLetter {
				upperAfterLower++
			}
			lowerSeen = lowerSeen || !upper
		case unicode.IsSpace(r):
			spaces++
		case r == '-' || r == '\'' || r == '’' || r == '.':
			// Between letters these join words ("case-sensitive",
			// "e.g."); next to a digit the digit decides.
			hyphen = hyphen || r == '-'
		default:
			symbol = true
		}
		prevLetter = letter
	}
	if digits == 0 && !symbol && !quoted && !cjkText && (apposition || upperAfterLower == 0) {
		return no, false // a plain word in Latin prose: the common case
	}
	if utf8.RuneCountInString(v) < 4 || !utf8.ValidString(v) {
		return no, false
	}
	if notASecret(v) || strings.Trim(v, "*•xX.") == "" || strings.Contains(v, "://") {
		return no, false
	}
	switch v[0] {
	case '[', '(', '{', '<':
		return no, false // a placeholder, an aside, a template
	case '%':
		if v[len(v)-1] == '%' || !hasASCIIDigit(v) {
			return no, false // "%PASSWORD%"
		}
	case '$':
		if len(v) > 1 && (v[1] == '{' || v[1] == '_' || isUpperOrDigit(v[1])) {
			return no, false // "$PASSWORD", "${DB_PASS}"
		}
	}
	if digits+letters == 0 {
		return no, false
	}
	lower := strings.ToLower(v)
	if proseStop[lower] {
		return no, false
	}
	if digits > 0 || symbol {
		if proseStop[strings.Trim(lower, "-_.")] || proseTechPrefix(lower) || numberWithUnit(v) || followedByUnit(text, ve, quoted) {
			return no, false
		}
		if !quoted && versionOrDate(v) && (apposition || v[0] == 'v' || v[0] == 'V' || len(v) <= 5) {
			return no, false // "password 2.4.1", "the password is v2.3.1", "is 50/50", "was 12:30"
		}
		if apposition && !quoted && letters == 0 && !symbol && digits < 6 && !cjkText {
			return no, false // "password 2024 policy"
		}
		if apposition && !quoted && sqlType(v) {
			return no, false // a schema: "password VARCHAR(255) NOT NULL"
		}
		if spaces > 0 && !quoted {
			return no, false
		}
		return redSpan{vs, ve, kPassword}, true
	}
	// Letters only, perhaps joined by hyphens or dots.
	switch {
	case spaces > 0:
		return no, false // a quoted phrase: an error message, not a password
	case hyphen && participle(lower):
		return no, false // "bcrypt-hashed", "auto-generated"
	case quoted:
		return redSpan{vs, ve, kPassword}, true
	case cjkText && letters >= 5 && isASCIIWord(v):
		return redSpan{vs, ve, kPassword}, true
	case !apposition && !hyphen && upperAfterLower > 0 && letters >= 6 && !proseProducts[lower]:
		return redSpan{vs, ve, kPassword}, true
	}
	return no, false
}

func isASCIIWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isASCIILetter(v[i]) {
			return false
		}
	}
	return true
}

// participle reports whether the last part of a hyphenated word is an
// English participle: "bcrypt-hashed", "auto-generated", "SHA-encrypting".
func participle(lower string) bool {
	last := lower[strings.LastIndexByte(lower, '-')+1:]
	return len(last) >= 4 && (strings.HasSuffix(last, "ed") || strings.HasSuffix(last, "ing"))
}

// proseTechPrefix reports whether a value names a hash, cipher or
// protocol, alone or with a suffix: "sha256", "SHA-256-hashed", "argon2id".
func proseTechPrefix(lower string) bool {
	for _, p := range [...]string{"sha", "md5", "bcrypt", "scrypt", "argon2", "pbkdf2", "aes", "utf", "base64", "wpa", "hmac", "rsa", "ecdsa", "ed25519", "x509", "pkcs", "tls", "ssl", "2fa", "mfa", "totp", "oauth", "ipv4", "ipv6"} {
		if strings.HasPrefix(lower, p) {
			rest := lower[len(p):]
			if rest == "" || rest[0] == '-' || rest[0] == '_' || isASCIIDigit(rest[0]) {
				return true
			}
		}
	}
	return false
}

// sqlType reports whether v is a column type with a size: "VARCHAR(255)".
func sqlType(v string) bool {
	l := spanWhile(v, 0, isASCIILetter)
	d := spanWhile(v, l+1, isASCIIDigit)
	return l > 0 && l+1 < len(v) && v[l] == '(' && d > l+1 && d+1 == len(v) && v[d] == ')'
}

// numberWithUnit reports whether v is a number with a unit or percent
// sign: "100%", "20px", "8chars", "16+".
func numberWithUnit(v string) bool {
	d := spanWhile(v, 0, isASCIIDigit)
	if d == 0 {
		return false
	}
	rest := strings.ToLower(v[d:])
	switch rest {
	case "%", "+", "x", "px", "ms", "s", "kb", "mb", "gb", "chars", "char", "characters", "digits", "letters", "bit", "bits", "bytes", "min", "h", "d", "k", "mins", "days":
		return true
	}
	// "8-stellig", "12-character", "16-digit"; and short ranges, "8-16".
	if len(rest) > 1 && rest[0] == '-' && (isASCIIWord(rest[1:]) && strings.ToLower(rest[1:]) == rest[1:] || len(v) <= 5 && spanWhile(rest, 1, isASCIIDigit) == len(rest)) {
		return true
	}
	return false
}

// followedByUnit reports whether the word after an unquoted value is a
// unit the value counts: "the password is 1234 characters long".
func followedByUnit(text string, ve int, quoted bool) bool {
	if quoted {
		return false
	}
	// Units are short words right after the value: read no further, so
	// that a text of values in one run stays linear.
	text = text[:min(len(text), ve+proseAfterContext)]
	p := spanWhile(text, ve, isHSpace)
	if r, _ := utf8.DecodeRuneInString(text[p:]); r == '位' || r == '个' || r == '個' || r == '字' {
		return true // "密码是 8-16 位", "6个字符"
	}
	e := p
	for e < len(text) && !isProseSpace(text[e]) && text[e] != '.' && text[e] != ',' {
		e++
	}
	if e == p {
		return false
	}
	return proseUnits[strings.ToLower(text[p:e])]
}

// versionOrDate reports whether v is digits joined by dots, dashes,
// slashes or colons, with an optional leading 'v': a version, date or time.
func versionOrDate(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	seps := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isASCIIDigit(c):
		case c == '.' || c == '-' || c == '/' || c == ':':
			seps++
		default:
			return false
		}
	}
	return seps > 0
}

func wordSet(lists ...string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = true
		}
	}
	return m
}

var proseUnits = wordSet(
	"characters chars character letters digits symbols numbers times attempts days months years hours minutes seconds bits bytes " +
		"caracteres caracter dígitos digitos letras veces días " +
		"zeichen stellen ziffern buchstaben mal tage " +
		"caractères chiffres lettres fois jours " +
		"caracteres dígitos letras vezes dias " +
		"caratteri cifre lettere volte giorni " +
		"अक्षर अंक")

// proseStop are words that say something about a password rather than
// being one, in the eight languages: they are never a value, quoted or
// not ('the app says password "expired"', "密码是 wrong").
var proseStop = wordSet(
	// en
	"wrong incorrect correct right invalid valid expired expire expiring rejected refused denied declined "+
		"accepted required optional needed missing empty blank short long weak strong too very not never "+
		"none still same different new old reset changed updated saved stored hashed encrypted masked hidden "+
		"visible shown ignored lost forgotten forgot locked blocked disabled enabled okay fine good bad fake "+
		"unknown random default temporary mandatory case sensitive working broken being the this that what "+
		"whatever something anything nothing secret secure insecure unset identical known simple complex "+
		"longer shorter sent emailed generated autofilled prefilled filled typed entered pasted copied "+
		"change changing update verify verified login logout manager policy strength length field button "+
		"screen option setting settings error failed failure problem issue recovery server account keyboard "+
		"autofill browser chrome safari firefox android iphone windows password passwords mine yours their "+
		"there here also only just actually really definitely probably exactly",
	// es
	"incorrecta incorrecto correcta correcto inválida invalida válida valida caducada caducado expirada "+
		"vencida rechazada bloqueada errónea erronea equivocada mala buena nueva vieja antigua larga corta "+
		"débil debil segura obligatoria requerida igual misma distinta diferente nunca ninguna una muy "+
		"demasiado siempre todavía cambiada restablecida olvidada guardada vacía vacia secreta contraseña",
	// de
	"falsch richtig korrekt ungültig ungueltig gültig gueltig abgelaufen gesperrt abgelehnt vergessen "+
		"geändert geaendert zurückgesetzt kurz lang schwach stark sicher unsicher leer erforderlich "+
		"nicht kein keine immer noch der die das ein eine mein dasselbe gleich anders geheim gespeichert "+
		"verschlüsselt zwingend pflicht passwort kennwort",
	// fr
	"incorrect incorrecte correct correcte invalide valide expiré expirée refusé refusée rejeté rejetée "+
		"bloqué bloquée faux fausse bon bonne mauvais mauvaise nouveau ancien trop très court courte long "+
		"longue faible fort vide obligatoire requis pas jamais une mon toujours même différent changé "+
		"réinitialisé oublié enregistré sécurisé",
	// pt
	"incorreta incorreto correta correto inválida válida expirada vencida recusada rejeitada bloqueada "+
		"errada errado certa certo nova antiga velha curta longa fraca forte segura vazia obrigatória "+
		"obrigatoria não nao nunca uma minha muito sempre mesma diferente alterada trocada redefinida "+
		"esquecida salva secreta senha",
	// it
	"sbagliata sbagliato errata corretta giusta valida invalida non scaduta rifiutata bloccata nuova "+
		"vecchia corta lunga debole forte sicura vuota obbligatoria richiesta mai una mia troppo molto "+
		"sempre stessa diversa cambiata reimpostata dimenticata salvata segreta",
	// hi, written in Latin letters
	"galat sahi theek thik nahi nahin kaam badal badla badli bhool bhul purana naya yaad expire expired "+
		"update",
)

// proseProducts are product names in mixed case that follow "password is"
// in reports ("the password is JavaScript-validated", "is iCloud's").
var proseProducts = wordSet("javascript typescript github gitlab bitbucket paypal wordpress youtube linkedin " +
	"postgresql mysql mongodb openssl openssh keepass keepassxc lastpass onepassword bitwarden dashlane " +
	"nordpass icloud iphone ipad ipados macos watchos tvos webauthn devops graphql jquery powershell " +
	"phpmyadmin sqlite mariadb openldap openvpn wireguard firebase cloudflare netlify vercel")

// maxProseValue is the longest value findProsePasswords reads, in bytes.
const maxProseValue = 128

// proseAfterContext is how much text after a value the judge may look at.
const proseAfterContext = 64

// withoutPlaceholders returns v with every placeholder taken out, and
// whether it had any.
func withoutPlaceholders(v string) (string, bool) {
	var b strings.Builder
	found := false
	for i := 0; i < len(v); {
		if v[i] == '[' {
			if n := placeholderLen(v[i:]); n > 0 {
				found = true
				i += n
				continue
			}
		}
		b.WriteByte(v[i])
		i++
	}
	return b.String(), found
}
