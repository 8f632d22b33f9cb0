package triage

import (
	"regexp"
	"strings"
)

// More category evidence, for the classes where the phrasing of an item
// points one way and its subject another:
//
//   - a question whose subject is a malfunction ("can this be fixed?",
//     "can I get my streak back?", "I tried five times, is there a
//     way?") is a bug asking for help, not a how-to question;
//   - a question whether something is broken or needs a step first ("is
//     it broken or do I have to enable something?") is a question;
//   - "no hay manera de que ..." (it just won't ...) is no how-to
//     question and no missing option;
//   - plans, and paying gladly for something, are requests;
//   - praise with the user's own slip as an aside ("that was my fault,
//     not the app") stays praise;
//   - a star rating given to someone else, or kind words quoted from
//     someone, are no praise of the product.

var (
	// "After the update" in the languages reRegression reads only as
	// "since".
	reRegressionAfter = regexp.MustCompile(`(?i)\b(?:despu[ée]s\s+de\s+(?:la\s+)?|tras\s+la\s+|con\s+la\s+(?:[úu]ltima\s+|nueva\s+)?)actualizaci[óo]n\b|\bnach\s+(?:dem|der|einem|einer)\s+(?:letzten\s+|neuen\s+)?(?:update|aktualisierung)\b|\bapr[èe]s\s+(?:la\s+)?(?:derni[èe]re\s+)?mise\s+[àa]\s+jour\b|\b(?:ap[óo]s|depois\s+d)a\s+(?:[úu]ltima\s+)?atualiza[çc][ãa]o\b|\bdopo\s+(?:l'|l\s|il\s+)?(?:ultimo\s+)?aggiornamento\b|\bna\s+de\s+(?:laatste\s+)?update\b|\bpo\s+(?:ostatniej\s+)?aktualizacji\b`)

	// Asking for a fix or for something back, not for a procedure.
	reFixAsked = regexp.MustCompile(`(?i)\b(?:can|could|will)\s+(?:this|it|that|these|they)\s+(?:please\s+)?be\s+(?:fixed|corrected|restored|repaired)\b|\bis\s+there\s+(?:a|any)\s+fix\b|\bd[áa]\s+(?:para|pra)\s+(?:corrigir|arrumar|consertar|resolver)\b|\bpodem\s+(?:resolver|arrumar|consertar)\b|\bse\s+puede\s+(?:arreglar|corregir|solucionar)\b|\b(?:lo|la|los|las)\s+pueden\s+(?:arreglar|corregir|solucionar)\b|\bpueden\s+(?:solucionar|corregir)\b|\bkann\s+man\s+(?:das|es)\s+(?:beheben|reparieren|korrigieren)\b|\bk[öo]nnt\s+ihr\s+(?:das|es)\s+(?:reparieren|korrigieren|fixen)\b|\bpouvez-vous\s+(?:r[ée]parer|r[ée]soudre|r[ée]tablir)\b|\best-ce\s+(?:que\s+(?:vous\s+pouvez|c'est)\s+)?(?:corrig|r[ée]par)\w*\b|\bsi\s+pu[òo]\s+(?:sistemare|correggere|risolvere)\b|\bpotete\s+(?:risolvere|ripristinare)\b|\bkunnen\s+jullie\s+(?:dit|het)\s+(?:repareren|fixen|herstellen)\b|\bda\s+si[ęe]\s+to\s+naprawi[ćc]\b`)

	// Asking to get something back: what was lost, when the text also
	// says it was lost or changed.
	reRecover = regexp.MustCompile(`(?i)\bget\s+(?:it|them|this|that|my\s+\w+(?:\s+\w+)?)\s+back\b|\b(?:restore|recover|bring\s+back)\s+(?:it|them|my)\b|\b(?:me\s+)?(?:lo|la|los|las)\s+(?:pueden|podr[ií]an|puedo)\s+(?:devolver|recuperar)\b|\brecuperar\s+(?:mi|mis|el|la|los|las|o|a|os|as|meu|minha|meus|minhas)\b|\bzur[üu]ck(?:holen|bekommen|bekomme|setzen)\b|\bwiederherstellen\b|\br[ée]cup[ée]rer\s+(?:mon|ma|mes|le|la|les)\b|\brestaurer\b|\bdevolver(?:me)?\b|\b(?:recuperare|ripristinare)\b|\bterug(?:krijgen|zetten|halen)\b|\bodzyska[ćc]\b|\bprzywr[óo]ci[ćc]\b`)

	// Trying again and again: "tried five times", "lo he intentado 4
	// veces", "dreimal versucht".
	reRetried = regexp.MustCompile(`(?i)\b(?:tried|retried|attempted)\s+(?:it\s+|this\s+|that\s+|again\s+)?(?:\d+|two|three|four|five|six|several|multiple|many|a\s+few|a\s+dozen|countless)\s+times\b|\b(?:tried|retried)\s+(?:\w+\s+){0,3}(?:again\s+and\s+again|over\s+and\s+over)\b|\bintent(?:ado|[ée])\s+(?:\w+\s+){0,2}(?:\d+|dos|tres|cuatro|cinco|seis|varias|muchas|mil)\s+veces\b|\b(?:zwei|drei|vier|f[üu]nf|sechs|mehr|x)mal\b.{0,30}\bversucht\b|\bversucht\b.{0,30}\b(?:(?:zwei|drei|vier|f[üu]nf|sechs|mehr)mal|\d+\s?mal|mehrmals)\b|\b(?:\d+\s?mal|mehrmals)\s+(?:\w+\s+){0,3}versucht\b|\bessay[ée]\s+(?:\w+\s+){0,2}(?:\d+|deux|trois|quatre|cinq|six|plusieurs)\s+fois\b|\btent(?:ei|ado|amos)\s+(?:\w+\s+){0,2}(?:\d+|duas|tr[êe]s|quatro|cinco|seis|v[áa]rias)\s+vezes\b|\bprovat[oaie]\s+(?:\w+\s+){0,2}(?:\d+|due|tre|quattro|cinque|sei|pi[ùu])\s+volte\b|\bgeprobeerd\b.{0,20}\b(?:\d+|twee|drie|vier|vijf|meerdere)\s+keer\b|\b(?:\d+|twee|drie|vier|vijf|meerdere)\s+keer\s+(?:\w+\s+){0,3}geprobeerd\b|\bpr[óo]bowa[łl](?:em|am|am\s+ju[żz])\s+(?:\w+\s+){0,2}(?:\d+|dwa|trzy|cztery|pi[ęe][ćc]|kilka)\s+razy\b`)

	// It happened again: "it happened again", "ha vuelto a pasar".
	reHappenedAgain = regexp.MustCompile(`(?i)\bhappen(?:ed|s)\s+(?:again|twice|(?:\d+|two|three|several|multiple)\s+times)\b|\b(?:twice|two\s+times|three\s+times)\s+now\b|\bha\s+vuelto\s+a\s+(?:pasar|ocurrir)\b|\b(?:pas[óo]|ha\s+pasado|ocurri[óo])\s+(?:otra\s+vez|de\s+nuevo|dos\s+veces|varias\s+veces)\b|\b(?:schon\s+)?wieder\s+passiert\b|\b(?:zweimal|mehrmals)\s+passiert\b|\bc'est\s+(?:encore\s+)?arriv[ée]\s+(?:deux|plusieurs|trois)\s+fois\b|\b[çc]a\s+recommence\b|\baconteceu\s+(?:de\s+novo|outra\s+vez|duas\s+vezes|v[áa]rias\s+vezes)\b|\b[èe]\s+(?:successo|capitato)\s+(?:di\s+nuovo|ancora|due\s+volte)\b|\bis\s+(?:weer|opnieuw)\s+gebeurd\b|\bsta[łl]o\s+si[ęe]\s+(?:znowu|ponownie|dwa\s+razy)\b`)

	// What the screen says now, after a change: "now it shows 1 star",
	// "ahora pone 1 día".
	reNowShows = regexp.MustCompile(`(?i)\bnow\s+(?:it\s+|only\s+|just\s+)?(?:shows?|says?|displays?|reads?)\b|\bit\s+(?:now\s+)?shows\s+\d|\bahora\s+(?:pone|dice|muestra|sale|aparece|marca)\b|\bjetzt\s+(?:steht|zeigt)\b|\bmaintenant\s+(?:affiche|indique|[çc]a\s+(?:affiche|indique))\b|\bagora\s+(?:mostra|diz|aparece|marca)\b|\bora\s+(?:mostra|dice|segna|indica)\b|\bnu\s+(?:staat|toont)\b|\bteraz\s+(?:pokazuje|wy[śs]wietla)\b`)

	// Useless, in more languages than reWeakProblem reads.
	reUseless = regexp.MustCompile(`(?i)\bno\s+sirve\s+(?:para|de)\s+nada\b|\bn[ãa]o\s+serve\s+(?:para|pra)\s+nada\b|\bunbrauchbar\b|\bne\s+sert\s+[àa]\s+rien\b|\binutilizzabile\b|\bnon\s+serve\s+a\s+(?:niente|nulla)\b|\bnutteloos\b|\bbezu[żz]yteczn\w*\b|\bin[úu]til\b|\binutile\b`)

	// "Is it broken or do I have to ...": asking whether there is a
	// malfunction at all.
	reBrokenAsked = regexp.MustCompile(`(?i)\b(?:is|are)\s+(?:\w+\s+){0,3}broken\b[^.!?]{0,80}\?|\bist\s+(?:\w+\s+){0,3}kaputt\b[^.!?]{0,80}\?|\bis\s+(?:\w+\s+){0,3}kapot\b[^.!?]{0,80}\?|\bczy\s+(?:\w+\s+){0,3}zepsut\w*[^.!?]{0,80}\?`)

	// The user takes the blame for a slip: "that was my fault, not the
	// app", "das lag an mir".
	reExonerated = regexp.MustCompile(`(?i)\bnot\s+the\s+app'?s?(?:\s+fault)?\b|\b(?:my|our)\s+(?:own\s+)?(?:fault|bad|mistake)\b|\buser\s+error\b|\bme\s+being\s+(?:slow|silly|dumb|clumsy|impatient)\b|\b(?:culpa\s+m[ií]a|mi\s+culpa|fue\s+culpa\s+m[ií]a)\b|\bno\s+(?:es|fue)\s+(?:culpa\s+de\s+)?la\s+app\b|\b(?:meine\s+schuld|mein\s+fehler|lag\s+an\s+mir|nicht\s+an\s+der\s+app)\b|\b(?:ma\s+faute|c'[ée]tait\s+moi|pas\s+la\s+faute\s+de\s+l'app\w*)\b|\b(?:culpa\s+minha|minha\s+culpa|erro\s+meu)\b|\b(?:colpa\s+mia|errore\s+mio|non\s+[èe]\s+colpa\s+dell'app)\b|\b(?:mijn\s+(?:eigen\s+)?(?:fout|schuld))\b|\b(?:moja\s+wina|m[óo]j\s+b[łl][ąa]d)\b`)

	// A star rating given to someone or something else ("I rated the
	// driver 5 stars", "left a 5 star review for a seller").
	reGivenRating = regexp.MustCompile(`(?i)\b(?:rated|rate|rating|gave|give|giving|left|leave|leaving|awarded|posted|wrote)\s+(?:\w+\s+){0,3}(?:5|five|10)[\s-]*(?:stars?|/\s*5|/\s*10)(?:\s+(?:review|rating)s?)?\b|\b(?:5|five)[\s-]stars?\s+(?:review|rating)s?\s+(?:for|to|of|on)\b|\b(?:di|puse|dej[ée])\s+(?:\w+\s+){0,3}(?:5|cinco)\s+estrellas\b|\b(?:5|f[üu]nf)\s+sterne\s+(?:gegeben|vergeben)\b|\b(?:mis|donn[ée])\s+(?:\w+\s+){0,3}(?:5|cinq)\s+[ée]toiles\b|\b(?:dei|deixei)\s+(?:\w+\s+){0,3}(?:5|cinco)\s+estrelas\b|\b(?:dato|messo|lasciato)\s+(?:\w+\s+){0,3}(?:5|cinque)\s+stelle\b`)

	// Words quoted from someone: a label, a message, a review text. They
	// are not the author's own praise.
	reQuoted = regexp.MustCompile(`(?:^|[\s(:])'[^'\n]{1,200}'(?:[\s.,!?;:)]|$)|"[^"\n]{1,200}"|“[^”\n]{1,200}”|«[^»\n]{1,200}»|„[^“”\n]{1,200}[“”]`)

	// Requests: plans, paying for a feature, "I'd love" in more
	// languages than reFeature reads.
	reFeatureMore = regexp.MustCompile(`(?i)\bany\s+plans?\s+(?:for|to|on)\b|\b(?:are\s+there|do\s+you\s+have)\s+(?:any\s+)?plans?\s+(?:for|to)\b|\bare\s+you\s+planning\s+(?:to|on)\b|\bon\s+(?:the|your)\s+roadmap\b|\b(?:would|'d)\s+(?:happily|gladly)\s+pay\b|\b(?:hay|tienen)\s+planes\s+(?:de|para)\b|\btienen\s+(?:pensado|previsto|planeado)\b|\bpagar[ií]a\s+con\s+gusto\b|\bme\s+encantar[ií]a\b|\bgibt\s+es\s+pl[äa]ne\b|\bplant\s+ihr\b|\bist\s+(?:\w+\s+){0,4}geplant\s*\?|\bw[üu]rde\s+(?:\w+\s+)?(?:gerne?\s+)?daf[üu]r\s+(?:be)?zahlen\b|\bf[äa]nde\s+(?:ich|es)\s+(?:\w+\s+)?(?:toll|sch[öo]n|super|praktisch|gut)\b|\best-(?:ce|il)\s+pr[ée]vu\b|\bpr[ée]voyez-vous\b|\bc'est\s+pr[ée]vu\b|\bj'adorerais\b|\bje\s+paierais\s+volontiers\b|\b(?:h[áa]|t[êe]m)\s+planos\s+(?:de|para)\b|\badoraria\b|\bpagaria\s+com\s+prazer\b|\b[èe]\s+previst[oa]\b|\bavete\s+in\s+programma\b|\bci\s+sono\s+piani\b|\badorerei\b|\bpagherei\s+volentieri\b|\bzijn\s+er\s+plannen\b|\bstaat\s+(?:\w+\s+){0,3}gepland\b|\bik\s+zou\s+het\s+(?:fijn|leuk|handig|top)\s+vinden\b|\bczy\s+planujecie\b|\bczy\s+jest\s+w\s+planach\b`)

	// A first-person goal ("I'd like to share them with my coach") next
	// to a how-to question is what the question is for, not a request
	// of the product. Asking for an ability ("to be able to", "an
	// option") stays a request.
	reGoalWish = regexp.MustCompile(`(?i)^(?:i'?d\s+(?:really\s+)?like|i\s+would\s+(?:really\s+)?like|i'?d\s+love|me\s+gustar[ií]a|ich\s+h[äa]tte\s+gerne?|je\s+voudrais|j'aimerais|gostaria|vorrei|mi\s+piacerebbe)$`)
	reAbility  = regexp.MustCompile(`(?i)\bbe\s+able\s+to\b|\boption\b|\bfeature\b|\bsetting\b|\bpoder\b|\bk[öo]nnen\b|\bpouvoir\b|\bpotere\b|\bopci[óo]n\b|\bm[öo]glichkeit\b`)

	// A negation right before a match: "no hay manera" is not "is there
	// a way".
	reNegBefore = regexp.MustCompile(`(?i)\b(?:no|not|nicht|kein|pas|n[ãa]o|non|niet|geen|nie)\s*$`)
)

// supportMatches lists the how-to and procedure questions of a text,
// without the ones a negation turns into a statement ("no hay manera
// de que guarde" is "it just won't save").
func supportMatches(text string) []string {
	var out []string
	for _, loc := range reSupport.FindAllStringIndex(text, -1) {
		if reNegBefore.MatchString(text[max(0, loc[0]-8):loc[0]]) {
			continue
		}
		out = append(out, text[loc[0]:loc[1]])
	}
	return out
}

// missingIndex locates a complaint about something missing, skipping
// "no hay manera de que ..." (it just won't ...), which names a
// behaviour, not a missing option.
func missingIndex(text string) []int {
	for _, loc := range reMissing.FindAllStringIndex(text, -1) {
		if strings.HasPrefix(strings.ToLower(strings.TrimLeft(text[loc[1]:], " ")), "que ") {
			continue
		}
		return loc
	}
	return nil
}

// praiseText is the text praise is read from: without the ratings the
// user gave someone else and without quoted words.
func praiseText(text, lower string) string {
	if findAnchored(reGivenRating, text, lower, anchorsGivenRating) != "" {
		text = reGivenRating.ReplaceAllString(text, " ")
	}
	if strings.ContainsAny(text, `'"“«„`) {
		text = reQuoted.ReplaceAllString(text, " ")
	}
	return text
}

// brokenOnlyAsked reports whether every "broken" in the text sits in a
// question asking whether something is broken.
func brokenOnlyAsked(text string) bool {
	if !reBrokenAsked.MatchString(text) {
		return false
	}
	rest := analyze(reBrokenAsked.ReplaceAllString(text, " "))
	return rest.bag["~broken"] == 0
}

// goalOnly reports whether every wish in the text is a first-person goal
// with no ability asked for.
func goalOnly(wishes []string, text string) bool {
	if len(wishes) == 0 || reAbility.MatchString(text) {
		return false
	}
	for _, w := range wishes {
		if !reGoalWish.MatchString(strings.TrimSpace(w)) {
			return false
		}
	}
	return true
}

// Anchors: a pattern of this file can only match a text holding one of
// its anchors, so a text without any is not scanned (the patterns run
// over up to 5 KB of every item).
var (
	anchorsRegressionAfter = []string{"actualiza", "update", "aktualis", "mise", "atualiza", "aggiorn", "aktualiz"}
	anchorsNowShows        = []string{"now", "shows", "ahora", "jetzt", "maintenant", "agora", "ora ", "nu ", "teraz"}
	anchorsRetried         = []string{"tried", "attempted", "intent", "versucht", "essay", "tent", "provat", "geprobeerd", "bowa"}
	anchorsHappenedAgain   = []string{"happen", "times", "twice", "vuelto", "pas", "ocurri", "passiert", "arriv", "recommence", "aconteceu", "success", "capitato", "gebeurd", "sta"}
	anchorsFixAsked        = []string{"fix", "correct", "restor", "repair", "corrig", "arrum", "consert", "resolv", "arregl", "soluci", "behe", "repar", "sistem", "risolv", "ripristin", "herstel", "napraw"}
	anchorsRecover         = []string{"back", "restor", "recover", "devolver", "recuper", "zur", "wiederherst", "cup", "ripristin", "terug", "odzyska", "przywr"}
	anchorsUseless         = []string{"nada", "brauchbar", "rien", "utiliz", "serve", "nutteloos", "yteczn", "til"}
	anchorsExonerated      = []string{"fault", "bad", "mistake", "error", "being", "not the app", "culpa", "la app", "schuld", "fehler", "an mir", "an der app", "faute", "moi", "erro", "colpa", "fout", "wina", "błąd", "blad"}
	anchorsFeatureMore     = []string{"plan", "roadmap", "pay", "encantar", "pläne", "geplant", "zahlen", "fände", "fande", "prévu", "prevu", "prévoyez", "prevoyez", "adorer", "paierais", "adorar", "previst", "programma", "piani", "pagherei", "gepland", "vinden"}
	anchorsGivenRating     = []string{"star", "estrell", "stern", "toile", "estrel", "stell", "/5", "/ 5", "/10", "/ 10"}
)

// findAnchored is re.FindString(text) when lower (text in lower case)
// holds one of the anchors, and "" otherwise.
func findAnchored(re *regexp.Regexp, text, lower string, anchors []string) string {
	for _, a := range anchors {
		if strings.Contains(lower, a) {
			return re.FindString(text)
		}
	}
	return ""
}
