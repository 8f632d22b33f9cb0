package triage

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Intake is the intake role's record of one item: what kind of feedback it
// is, in which language, and the facts an engineer needs (device, OS, app
// version, steps). Cues say why the category was chosen.
type Intake struct {
	Category   string   `json:"category"`
	Language   string   `json:"language"`
	Device     string   `json:"device,omitempty"`
	OS         string   `json:"os,omitempty"`
	AppVersion string   `json:"app_version,omitempty"`
	Steps      []string `json:"steps,omitempty"`
	Cues       []string `json:"cues,omitempty"`
	Confidence float64  `json:"confidence"`
}

// Classify decides an item's category and extracts its facts. Metadata
// from the feedback channel wins over what the text says; the text fills
// what the channel left out.
//
// The rules, in order: spam (links, obfuscated URLs, free-currency offers,
// promo codes) first, because spam often carries a 5-star rating; a
// feature request when it asks for something new and reports no
// malfunction; a bug when a malfunction is reported (problem words beat a
// high rating: "love it but it crashes" is a bug); a support question for
// how-do-I questions without a malfunction; praise for positive words or a
// high rating without a problem. A low rating with a vague complaint is a
// bug (it will be asked for details).
//
// Only a bounded window of a long text is read (its head and its tail,
// see boundText): what kind of feedback it is shows at its start and its
// end, and a pasted log must not make intake slow.
func Classify(it Item) Intake {
	it.Text = boundText(it.Text, intakeHead, intakeTail)
	in := facts(it)
	in.Language = Language(it.Text)
	in.Steps = MergeSteps(it.Steps, ExtractSteps(it.Text))
	in.Category, in.Confidence, in.Cues = categorize(it)
	return in
}

// Facts is the device, OS and app version of an item as Classify reads
// them (the form's metadata, else its text), without the category: the
// cheap part, for callers that re-read many stored items.
func Facts(it Item) Intake {
	it.Text = boundText(it.Text, intakeHead, intakeTail)
	return facts(it)
}

func facts(it Item) Intake {
	in := Intake{
		Device:     metaValue(it.Metadata.Device),
		OS:         metaValue(it.Metadata.OS),
		AppVersion: metaValue(it.Metadata.AppVersion),
	}
	if in.Device == "" {
		in.Device = ExtractDevice(it.Text)
	}
	if in.OS == "" {
		in.OS = ExtractOS(it.Text)
	}
	if in.AppVersion == "" {
		in.AppVersion = ExtractAppVersion(it.Text)
	}
	return in
}

// The window intake reads of a long text: its first 8 KB (the report and
// the start of any pasted log) and its last 2 KB (a closing question,
// rating or signature).
const intakeHead, intakeTail = 8 << 10, 2 << 10

// boundText returns s when it is short, else its first head and last tail
// bytes joined by a blank line (so no phrase spans the cut), both cut at
// rune starts.
func boundText(s string, head, tail int) string {
	if len(s) <= head+tail {
		return s
	}
	h := head
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h] + "\n\n" + s[t:]
}

// metaValue is a metadata field with placeholders ("unknown", "n/a",
// "-") read as absent.
func metaValue(s string) string {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "unknown", "n/a", "na", "none", "null", "-", "?", "not set", "unset":
		return ""
	}
	return s
}

func uniqueLower(ms []string) []string {
	var out []string
	for _, m := range ms {
		m = strings.ToLower(m)
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

func capsRatio(s string) float64 {
	up, letters := 0, 0
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			up++
			letters++
		} else if r >= 'a' && r <= 'z' {
			letters++
		}
	}
	if letters < 10 {
		return 0
	}
	return float64(up) / float64(letters)
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }

// keyedRe is a pattern with the lower-case keywords one of which the text
// must contain for the pattern to be tried: checking a few substrings is
// much cheaper than running every pattern over every ticket.
type keyedRe struct {
	keys []string
	re   *regexp.Regexp
}

// The pattern runs on a window around each keyword only, so its cost does
// not grow with the text (a ticket description can be long).
const keyWindowBefore, keyWindowAfter = 16, 48

func (k keyedRe) findAll(text, lower string) []string {
	var out []string
	for _, loc := range k.find(text, lower, -1) {
		out = append(out, text[loc[0]:loc[1]])
	}
	return out
}

func (k keyedRe) findIndex(text, lower string) []int {
	if locs := k.find(text, lower, 1); len(locs) > 0 {
		return locs[0]
	}
	return nil
}

// find returns up to n (all when n < 0) match locations in text, in order
// of position. lower must be strings.ToLower(text), which keeps byte
// offsets for the scripts the keywords use.
func (k keyedRe) find(text, lower string, n int) [][]int {
	if len(lower) != len(text) {
		lower = text // a case change altered lengths: fall back to a full scan
		if locs := k.re.FindAllStringIndex(text, n); locs != nil {
			return locs
		}
		return nil
	}
	var locs [][]int
	seen := map[int]bool{}
	for _, key := range k.keys {
		for from := 0; ; {
			i := strings.Index(lower[from:], key)
			if i < 0 {
				break
			}
			i += from
			from = i + len(key)
			lo, hi := max(0, i-keyWindowBefore), min(len(text), i+keyWindowAfter)
			for lo > 0 && !utf8.RuneStart(text[lo]) {
				lo--
			}
			for hi < len(text) && !utf8.RuneStart(text[hi]) {
				hi++
			}
			for _, m := range k.re.FindAllStringIndex(text[lo:hi], -1) {
				start, end := lo+m[0], lo+m[1]
				// A match cut by the window's edge is found again whole
				// from a wider window only if it touches the edge.
				if (m[0] == 0 && lo > 0) || (m[1] == hi-lo && hi < len(text)) {
					if full := k.re.FindStringIndex(text[max(0, start-keyWindowBefore):min(len(text), end+keyWindowAfter)]); full != nil {
						off := max(0, start-keyWindowBefore)
						start, end = off+full[0], off+full[1]
					}
				}
				if !seen[start] {
					seen[start] = true
					locs = append(locs, []int{start, end})
				}
			}
		}
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i][0] < locs[j][0] })
	if n >= 0 && len(locs) > n {
		locs = locs[:n]
	}
	return locs
}

var (
	deviceRes = []keyedRe{
		{[]string{"iphone"}, regexp.MustCompile(`(?i)\biphone\s?(?:\d{1,2}|se|x[rs]?)(?:\s?(?:pro\s?max|pro|max|plus|mini))?\b`)},
		{[]string{"ipad"}, regexp.MustCompile(`(?i)\bipad(?:\s?(?:pro|air|mini))?(?:\s?\d{1,2})?\b`)},
		{[]string{"pixel"}, regexp.MustCompile(`(?i)\b(?:google\s)?pixel\s?\d{1,2}a?(?:\s?(?:pro|xl|fold))?\b`)},
		{[]string{"samsung", "galaxy"}, regexp.MustCompile(`(?i)\b(?:samsung\s+)?galaxy\s+(?:s|a|m|note|z\s?fold|z\s?flip|tab\s?s?)\s?\d{1,3}(?:\s?(?:ultra|plus|fe))?\b|\bsamsung\s+(?:s|a|m|note|z\s?fold|z\s?flip)\s?\d{1,3}(?:\s?(?:ultra|plus|fe))?\b`)},
		{[]string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"}, regexp.MustCompile(`(?i)\b[sa]\d{2}(?:\s?(?:ultra|plus|fe))?\b`)},
		{[]string{"oneplus", "one plus"}, regexp.MustCompile(`(?i)\bone\s?plus\s?(?:nord\s?)?\d{1,2}[a-z]?(?:\s?pro)?\b`)},
		{[]string{"xiaomi", "redmi", "poco"}, regexp.MustCompile(`(?i)\b(?:xiaomi|redmi|poco)(?:\s(?:note\s)?\d{1,2}[a-z]?(?:\s?(?:pro|ultra|lite))?)?\b`)},
		{[]string{"huawei"}, regexp.MustCompile(`(?i)\bhuawei(?:\s(?:[pm]\d{1,2}|mate\s?\d{1,2})(?:\s?pro)?)?\b`)},
		{[]string{"moto"}, regexp.MustCompile(`(?i)\bmoto(?:rola)?\s?(?:[gezx]\d{1,3}|edge)(?:\s?(?:power|play|plus))?\b`)},
		{[]string{"oppo", "vivo", "realme", "nokia", "honor", "xperia", "nothing phone", "zenfone"}, regexp.MustCompile(`(?i)\b(?:oppo|vivo|realme|nokia|honor|xperia|sony\s+xperia|nothing\s+phone|zenfone)(?:\s?[a-z]?\d{1,3}[a-z]?)?\b`)},
		{[]string{"macbook", "imac", "mac mini", "macmini", "chromebook", "surface", "steam", "apple watch"}, regexp.MustCompile(`(?i)\b(?:macbook(?:\s(?:air|pro))?|imac|mac\s?mini|chromebook|surface(?:\s(?:pro|laptop))?|steam\s?deck|apple\s+watch)\b`)},
	}
	osRes = []keyedRe{
		{[]string{"android"}, regexp.MustCompile(`(?i)\bandroid(?:\s?(\d{1,2}(?:\.\d+)?))?\b`)},
		{[]string{"ipados"}, regexp.MustCompile(`(?i)\bipados(?:\s?(\d{1,2}(?:\.\d+){0,2}))?\b`)},
		{[]string{"ios"}, regexp.MustCompile(`(?i)\bios(?:\s?(\d{1,2}(?:\.\d+){0,2}))?\b`)},
		{[]string{"windows"}, regexp.MustCompile(`(?i)\bwindows(?:\s?(10|11|7|8(?:\.1)?))?\b`)},
		{[]string{"mac"}, regexp.MustCompile(`(?i)\bmac\s?os(?:\s?(\d{2}(?:\.\d+)?))?\b|\bmacos(?:\s?(\d{2}(?:\.\d+)?))?\b`)},
		{[]string{"linux", "ubuntu", "chrome", "harmony", "wear", "watchos"}, regexp.MustCompile(`(?i)\b(?:linux|ubuntu|chrome\s?os|harmony\s?os|wear\s?os|watchos)\b`)},
	}
	reVersionCue = regexp.MustCompile(`(?i)(?:\bversion|\bversi[óo]n|\bvers[ãa]o|\bversione|\bv\.?|\bver\.?|\bupdat(?:e|ed|ing)\s+(?:to\s+)?|\bupgrad(?:e|ed|ing)\s+(?:to\s+)?|\bon\s+|\bbuild\s+|\brelease\s+)\s?(\d+\.\d+(?:\.\d+)*)\b`)
	reVersion3   = regexp.MustCompile(`\b(\d{1,3}\.\d{1,3}\.\d{1,4})\b`)
	reOSBefore   = regexp.MustCompile(`(?i)(?:android|ios|ipados|windows|macos|mac\s?os|os)\s*$`)
)

// ExtractDevice returns the first device model the text names, or "".
func ExtractDevice(text string) string {
	best, at := "", -1
	lower := strings.ToLower(text)
	for _, re := range deviceRes {
		if loc := re.findIndex(text, lower); loc != nil && (at < 0 || loc[0] < at) {
			best, at = strings.TrimSpace(text[loc[0]:loc[1]]), loc[0]
		}
	}
	return best
}

// ExtractOS returns the first operating system (with its version when
// given) the text names, or "".
func ExtractOS(text string) string {
	best, at := "", -1
	lower := strings.ToLower(text)
	for _, re := range osRes {
		if loc := re.findIndex(text, lower); loc != nil && (at < 0 || loc[0] < at) {
			best, at = strings.TrimSpace(text[loc[0]:loc[1]]), loc[0]
		}
	}
	return best
}

// ExtractAppVersion returns an app version stated in the text ("on
// 2.3.9", "updated to v2.4", or a bare three-part number not preceded by
// an OS name), or "".
func ExtractAppVersion(text string) string {
	for _, m := range reVersionCue.FindAllStringSubmatchIndex(text, -1) {
		if !reOSBefore.MatchString(text[:m[2]]) {
			return text[m[2]:m[3]]
		}
	}
	for _, m := range reVersion3.FindAllStringSubmatchIndex(text, -1) {
		v := text[m[2]:m[3]]
		parts := strings.Split(v, ".")
		if len(parts[2]) == 4 { // a date such as 14.09.2026
			continue
		}
		if reOSBefore.MatchString(text[:m[0]]) {
			continue
		}
		if m[1] < len(text) && text[m[1]] == '.' && m[1]+1 < len(text) && text[m[1]+1] >= '0' && text[m[1]+1] <= '9' {
			continue // an address such as 10.0.0.1
		}
		return v
	}
	return ""
}

var (
	reNumbered    = regexp.MustCompile(`^\s*(?:\d+[.)]|[-*•]|step\s*\d+|paso\s*\d+|schritt\s*\d+|[ée]tape\s*\d+|passo\s*\d+)\s*`)
	reStepTrigger = regexp.MustCompile(`(?i)\b(?:when(?:ever)?\s+i|every\s+time|each\s+time|after\s+i|if\s+i|once\s+i|as\s+soon\s+as|cuando|cada\s+vez|al\s+(?:abrir|tocar|pulsar|entrar|iniciar)|wenn\s+ich|jedes\s+mal|sobald|beim\s+\w+|quand\s+je|chaque\s+fois|lorsque|d[èe]s\s+que|quando|toda\s+vez|sempre\s+que|ao\s+\w+r\b|ogni\s+volta)\b`)
	reStepVerb    = regexp.MustCompile(`(?i)\b(?:tap(?:ped|ping)?|click(?:ed|ing)?|press(?:ed|ing)?|open(?:ed|ing)?|select(?:ed|ing)?|choose|chose|chosen|pick(?:ed)?|go(?:ing)?\s+to|went\s+to|navigat\w*|enter(?:ed)?|typ(?:e|ed|ing)|scroll\w*|swip\w*|drag\w*|launch\w*|restart\w*|log(?:ged)?\s+in|sign(?:ed)?\s+in|buy|bought|purchas\w*|upload\w*|download\w*|export\w*|shar(?:e|ed|ing)|sav(?:e|ed|ing)|delet\w*|creat\w*|send|sent|sync\w*|install\w*|switch\w*|turn(?:ed)?\s+(?:on|off)|enabl\w*|disabl\w*|rotat\w*|connect\w*|pair\w*|search\w*|` +
		`toco|pulso|abro|elijo|selecciono|intento|entro|compro|compr[ée]|descargo|subo|guardo|voy\s+a|hago\s+clic|inicio|` +
		`tippe|klicke|[öo]ffne|w[äa]hle|gehe\s+(?:auf|zu|in)|starte|kaufe|lade|speichere|melde\s+mich|` +
		`ouvre|appuie|clique|choisis|s[ée]lectionne|vais|lance|ach[èe]te|enregistre|` +
		`clico|escolho|seleciono|salvo|vou|tocco|clicco|apro|scelgo|seleziono|vado)\b`)
)

// ExtractSteps returns the sentences that describe what the reporter did
// (an action verb, a "when I..." trigger or a numbered step).
func ExtractSteps(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		numbered := reNumbered.MatchString(line)
		for _, s := range sentences(line) {
			s = strings.TrimSpace(s)
			if len(s) < 4 {
				continue
			}
			if numbered || isStepSentence(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

var (
	// An action on a bare pronoun ("when I press them") names nothing
	// to reproduce.
	rePronounObject = regexp.MustCompile(`(?i)^\s*(?:it|them|this|that|those|these|sie|es|ihn|lo|la|los|las|le|les|li)\s*(?:[.!?,;:)]|$|\s+(?:and|again|y|und|et|e|en|i)\b)`)
	// A gerund is an action the reporter did only after a trigger word
	// ("after switching accounts"), not in "considering switching apps".
	// A verb form used as a noun names a feature, not an action: "sync is
	// broken", "the upload fails", "my download keeps stopping".
	reNounBefore    = regexp.MustCompile(`(?i)\b(?:the|my|a|an|your|our|this|that|its|their|el|la|mi|der|die|das|mein|meine|le|mon|ma|o|a|meu|minha|il|mio)\s+$`)
	reNounAfter     = regexp.MustCompile(`(?i)^\s+(?:is|are|was|were|isn'?t|aren'?t|wasn'?t|doesn'?t|don'?t|didn'?t|won'?t|has|have|hasn'?t|keeps|kept|stopped|never|fails?|failed|no\s+longer|just|button|feature|page|screen|tab|option|setting|status)\b`)
	reGerundTrigger = regexp.MustCompile(`(?i)\b(?:when|while|after|before|by|on|upon|keeps?|kept|tried|try|start(?:ed)?)\s+(?:\w+\s+)?$`)
)

// isStepSentence reports whether a sentence describes something the
// reporter did: an action verb with an object (or a gerund after a
// trigger word), or a "when I..." trigger whose action is not only on a
// pronoun.
func isStepSentence(s string) bool {
	locs := reStepVerb.FindAllStringIndex(s, -1)
	for _, loc := range locs {
		verb := strings.ToLower(s[loc[0]:loc[1]])
		if rePronounObject.MatchString(s[loc[1]:]) {
			continue
		}
		if reNounBefore.MatchString(s[:loc[0]]) || reNounAfter.MatchString(s[loc[1]:]) {
			continue
		}
		if strings.HasSuffix(verb, "ing") && !reGerundTrigger.MatchString(s[:loc[0]]) {
			continue
		}
		return true
	}
	return len(locs) == 0 && reStepTrigger.MatchString(s)
}

// sentences splits text at line breaks and at ".", "!", "?" or ";"
// followed by a space or the end, so "2.4.1" and "e.g." inside a sentence
// do not split it.
func sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(string(rs[start:end])); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\n':
			flush(i)
		case '.', '!', '?', ';', '。', '！', '？':
			j := i
			for j+1 < len(rs) && strings.ContainsRune(".!?;。！？", rs[j+1]) {
				j++
			}
			if j+1 == len(rs) || unicode.IsSpace(rs[j+1]) || rs[i] > 0x3000 {
				flush(j + 1)
			}
			i = j
		}
	}
	flush(len(rs))
	return out
}
