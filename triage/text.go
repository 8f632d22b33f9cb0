package triage

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The text layer turns report prose, ticket text and crash signatures into
// one vocabulary of terms. A term is either a concept ("~crash"), when the
// words belong to the multilingual lexicon (lexicon.go), or a light stem of
// any other word. Concepts are what let a Spanish report meet an English
// ticket; stems carry the product's own nouns, which no lexicon knows.

// token is one word of normalised text: lower case, accents folded.
type token struct {
	s   string
	num bool // only digits (and separators)
	neg bool // a negative number literal such as -2,094,332,110
}

// foldTable maps the accented Latin letters (Latin-1 Supplement, Latin
// Extended-A and -B) to their base letter.
var foldTable = func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'đ': "d", 'ł': "l", 'ı': "i"}
	for r := rune(0xC0); r <= 0x24F; r++ {
		lr := unicode.ToLower(r)
		if _, ok := m[lr]; ok {
			continue
		}
		d := norm.NFD.String(string(lr))
		base, _ := utf8.DecodeRuneInString(d)
		if base < 128 && unicode.IsLetter(base) {
			m[lr] = string(base)
		}
	}
	return m
}()

// fold lower-cases s and strips diacritics from Latin letters, so
// "Sesión" and "sesion", "stürzt" and "sturzt" compare equal.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		r = unicode.ToLower(r)
		if r < 128 {
			b.WriteRune(r)
			continue
		}
		if f, ok := foldTable[r]; ok {
			b.WriteString(f)
			continue
		}
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tokenize splits prose into folded tokens. Apostrophes join English
// negations ("doesn't" → "doesnt") and split elisions ("l'app" → "l",
// "app"). Digit groups joined by "." or "," stay one token ("2.4.1"), and a
// leading minus on a number marks it negative.
func tokenize(s string) []token {
	s = fold(s)
	var out []token
	rs := []rune(s)
	n := len(rs)
	for i := 0; i < n; {
		r := rs[i]
		if !isWordRune(r) {
			i++
			continue
		}
		start := i
		neg := false
		if start > 0 && rs[start-1] == '-' && unicode.IsDigit(r) && (start < 2 || !isWordRune(rs[start-2])) {
			neg = true
		}
		digits := true
		var b strings.Builder
		for i < n {
			c := rs[i]
			switch {
			case isWordRune(c):
				if !unicode.IsDigit(c) {
					digits = false
				}
				b.WriteRune(c)
				i++
				continue
			case (c == '.' || c == ',') && digits && i+1 < n && unicode.IsDigit(rs[i+1]) && b.Len() > 0:
				b.WriteRune(c)
				i++
				continue
			case (c == '\'' || c == '’') && i+1 < n && (rs[i+1] == 't') && (i+2 >= n || !isWordRune(rs[i+2])):
				// English negation: doesn't, can't, won't.
				i++
				continue
			}
			break
		}
		w := b.String()
		if w == "" {
			continue
		}
		out = append(out, token{s: w, num: digits, neg: neg && digits})
	}
	return out
}

// splitIdent splits a code identifier or a crash signature into words:
// camelCase, snake_case, dots, colons, parentheses and digits all break
// words ("HttpClientTimeoutException:5" → http client timeout exception 5).
func splitIdent(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, fold(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			// A capital starts a word unless it continues an acronym
			// ("NPE", "HTTPClient" → http client).
			if len(cur) > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			cur = append(cur, r)
		case unicode.IsLower(r):
			if len(cur) > 0 && unicode.IsDigit(cur[len(cur)-1]) {
				flush()
			}
			cur = append(cur, r)
		case unicode.IsDigit(r):
			if len(cur) > 0 && !unicode.IsDigit(cur[len(cur)-1]) {
				flush()
			}
			cur = append(cur, r)
		case unicode.IsLetter(r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// identWords returns the lower-case identifiers of s as whole words
// ("PhotoSync.merge(PhotoSync.kt:301)" → photosync, merge, photosync, kt,
// 301), the form in which a component name may appear verbatim.
func identWords(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) }) {
		out = append(out, fold(f))
	}
	return out
}

// stem is a light, language-agnostic suffix stripper. It only has to make
// "crashes", "crashed" and "crashing" meet; character n-grams (search.go)
// absorb what it misses.
func stem(w string) string {
	if len(w) <= 3 || !isAlpha(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) >= 7:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) >= 6:
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "e") && len(w) >= 5:
		w = w[:len(w)-1]
	}
	return w
}

func isAlpha(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// stopwords are function words of the languages the lexicon covers, plus
// words every app report uses ("app", "please") that say nothing about
// which bug it is.
var stopwords = makeSet(`
a an the and or but if then so than that this these those there here it its it's i me my mine we our you your he she they them their
is am are was were be been being do does did doing have has had having will would shall should can could may might must
of in on at to from by for with without about into onto over under after before since until while when whenever where what which who whom whose why how
not no nor yes all any some each every both few more most other such only own same too very just also still even ever again already yet
up down out off once one two anyone anything everything something nothing someone everyone else lot lots really much many
as like get got gets getting go goes going went come make made take took want wanted need needs know think see say said tell
hi hello hey thanks thank thx please pls plz regards kind dear cheers best lol ok okay guys
app apps application game games gaming version build
im ive id ill dont doesnt didnt cant cannot wont isnt arent wasnt werent havent hasnt couldnt wouldnt shouldnt
ve ll re fix fixed fixes above below about around approx time times new old yesterday today tomorrow lately recently anymore actually whole used use keep kept asked ask whether because otherwise since way bit little big fine bad good great nice right left day days week weeks month hour hours minute minutes now then always never sometimes often usually literally basically seriously totally completely
el la los las lo un una unos unas y o pero si no ni que de del al en con por para sin sobre entre desde hasta cuando donde como cual quien porque pues
es son era fue ser estar esta esto este estos estas ese esa eso hay he ha han hemos tengo tiene tienen mi mis tu tus su sus me te se nos le les ya muy mas tambien todo toda todos
juego aplicacion app favor gracias hola
der die das den dem des ein eine einen einem einer und oder aber wenn dann als wie wo was wer warum weil dass ob mit ohne von zu zum zur auf aus bei nach vor seit fur uber unter
ist sind war waren bin bist sein habe hat haben hatte ich du er sie es wir ihr mein meine meinen mich mir dein sich nicht kein keine auch noch schon sehr nur immer mal jetzt
spiel bitte danke hallo
le la les un une des du de et ou mais si ne pas plus que qui quoi quand comme dans sur sous avec sans pour par chez entre depuis vers
est sont etait ete etre ai as avons avez ont je tu il elle on nous vous ils elles mon ma mes ton ta tes son sa ses me te se moi toi lui leur ce cet cette ces ca cela tres aussi encore deja toujours tout tous toute
jeu appli merci bonjour svp
o a os as um uma uns umas e ou mas se nao que do da dos das no na nos nas em com sem por para pelo pela desde ate quando onde como porque
eu voce ele ela nos eles elas meu minha meus minhas seu sua seus suas isso isto esse essa este esta estou esta estao foi era ser ter tenho tem muito mais tambem ja ainda sempre
jogo aplicativo obrigado obrigada ola
il lo gli i le un uno una e ed o ma se non che di da del della dello dei delle al alla nel nella con senza per su tra fra quando dove come perche
io tu lui lei noi voi loro mio mia miei mie suo sua ho hai ha abbiamo hanno sono sei era essere molto piu anche gia ancora sempre questo questa quello quella
gioco applicazione grazie ciao
`)

func makeSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		f = strings.TrimSuffix(f, "?")
		m[fold(f)] = true
	}
	return m
}

// terms is a bag of canonical terms with their counts.
type terms map[string]int

// analyzed is one text turned into terms.
type analyzed struct {
	seq   []string // canonical terms in order (concepts and stems)
	stems []string // stems of the words no concept claimed (for n-gram matching)
	bag   terms
}

// analyze turns prose (a report, a ticket) into canonical terms: concept
// phrases first (longest match), then stems of the remaining non-stop
// words. Prose has typos: a word of six letters or more that neither the
// lexicon nor the stopwords know is read as the concept it nearly spells
// ("statment" → ~statement); reports and tickets are read the same way,
// so a word taken for a concept on one side is taken for it on the other.
// A negative number literal adds "~negative".
func analyze(s string) analyzed {
	return analyzeTokens(tokenize(s), true)
}

func analyzeTokens(toks []token, typos bool) analyzed {
	a := analyzed{bag: terms{}}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = t.s
	}
	for i := 0; i < len(toks); {
		if c, n := lex.match(words, i); n > 0 {
			for _, id := range c {
				a.add("~" + id)
			}
			i += n
			continue
		}
		t := toks[i]
		i++
		if t.neg {
			a.add("~negative")
		}
		if t.num || stopwords[t.s] || utf8.RuneCountInString(t.s) < 2 {
			continue
		}
		if typos {
			if ids := lex.fuzzy(t.s); len(ids) > 0 {
				for _, id := range ids {
					a.add("~" + id)
				}
				continue
			}
		}
		st := stem(t.s)
		a.add(st)
		a.stems = append(a.stems, st)
	}
	return a
}

// analyzeIdent analyses a code identifier (signature, stack frame): it is
// split into words, then read like prose.
func analyzeIdent(s string) analyzed {
	var toks []token
	for _, w := range splitIdent(s) {
		toks = append(toks, token{s: w, num: isDigits(w)})
	}
	return analyzeTokens(toks, false)
}

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

func (a *analyzed) add(t string) {
	a.seq = append(a.seq, t)
	a.bag[t]++
}

// isConcept reports whether a term is a lexicon concept.
func isConcept(t string) bool { return strings.HasPrefix(t, "~") }

// termWeight is the prior weight of a term before any corpus statistics:
// a concept's specificity from the lexicon, a flat weight for stems.
func termWeight(t string) float64 {
	if isConcept(t) {
		if c, ok := lex.concepts[t[1:]]; ok {
			return c.spec
		}
		return 1
	}
	return 0.8
}

// codeWeight is the prior weight of a term taken from an identifier, where
// words such as "manager" or "on" carry no meaning.
func codeWeight(t string) float64 {
	if genericCode[t] {
		return 0.2
	}
	return termWeight(t)
}

// genericCode are words that appear in identifiers of any code base and
// say nothing about a feature.
var genericCode = makeSet(`on get set do handle handler impl manager service util utils helper helpers main thread
kt swift java js ts m mm cpp cc c h py go dart cs rb lang com org net io
view activity fragment controller bridge delegate module base core internal default common
init run start invoke call apply execute process dispatch result callback
null pointer exception error npe anr oom sig`)

// Language guesses the ISO 639-1 language of a text from function words
// and letters; English when nothing else wins. Non-Latin scripts map to
// their main language.
func Language(text string) string {
	counts := map[string]float64{}
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			counts["ja"] += 3
		case unicode.Is(unicode.Han, r):
			counts["zh"] += 1
		case unicode.Is(unicode.Hangul, r):
			counts["ko"] += 3
		case unicode.Is(unicode.Cyrillic, r):
			counts["ru"] += 1
		case unicode.Is(unicode.Arabic, r):
			counts["ar"] += 1
		case unicode.Is(unicode.Greek, r):
			counts["el"] += 1
		case unicode.Is(unicode.Hebrew, r):
			counts["he"] += 1
		case unicode.Is(unicode.Thai, r):
			counts["th"] += 1
		case unicode.Is(unicode.Devanagari, r):
			counts["hi"] += 1
		}
		switch r {
		case 'ñ', '¿', '¡':
			counts["es"] += 2
		case 'ß', 'ä', 'ö', 'ü':
			counts["de"] += 1.5
		case 'ã', 'õ':
			counts["pt"] += 2
		case 'ç':
			counts["fr"] += 0.6
			counts["pt"] += 0.6
		case 'è', 'ù', 'ò', 'ì':
			counts["it"] += 0.7
			counts["fr"] += 0.3
		case 'ê', 'â', 'ô', 'î', 'û', 'ë', 'ï', 'œ':
			counts["fr"] += 0.7
			counts["pt"] += 0.2
		}
	}
	for _, t := range tokenize(text) {
		langs := langWords[t.s]
		for _, l := range langs {
			counts[l] += 1 / float64(len(langs))
		}
	}
	best, bestN := "en", 0.0
	for _, l := range []string{"en", "es", "de", "fr", "pt", "it", "ja", "zh", "ko", "ru", "ar", "el", "he", "th", "hi"} {
		if counts[l] > bestN {
			best, bestN = l, counts[l]
		}
	}
	return best
}

// langWords maps frequent function words to the languages using them.
var langWords = func() map[string][]string {
	m := map[string][]string{}
	for l, s := range map[string]string{
		"en": "the and is it to my i when of in on with this not after but have you can what how was it's im dont doesnt cant every since would please there they from that",
		"es": "el la los las que de y en es cuando con por se mi no para una un esto pero desde sin del al lo muy tengo cuenta juego porque ya sesion",
		"de": "der die das und ist ich nicht mit wenn auf es ein eine mein beim nach zu den dem auch aber sich wird seit immer noch bitte spiel kann habe",
		"fr": "le la les et est je ne pas de des un une quand avec pour mon sur dans que qui il elle ca mais apres depuis jeu toujours plus rien j qu n l d se",
		"pt": "o a os as que de e nao com quando um uma meu minha para em no na do da mas depois isso esta jogo sempre voce ele",
		"it": "il lo gli la le che di e non con quando un una mio mia per in nel nella della del ma dopo questo sono gioco sempre ogni anche l d si",
	} {
		for _, w := range strings.Fields(s) {
			m[w] = append(m[w], l)
		}
	}
	return m
}()
