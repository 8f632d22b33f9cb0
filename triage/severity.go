package triage

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// crashStanding is where one signature falls in the project's own crash
// log: its rank by distinct users among all signatures, the share of
// signatures with fewer users, and the median users per signature.
type crashStanding struct {
	rank, of int
	below    float64 // share of the other signatures with fewer users
	median   float64
}

// standingOf places agg among all signatures (CrashLog.Query returns every
// signature, scored, so crashes is the whole distribution).
func standingOf(agg *CrashAggregate, crashes []CrashAggregate) crashStanding {
	if agg == nil || len(crashes) == 0 {
		return crashStanding{}
	}
	users := make([]int, 0, len(crashes))
	st := crashStanding{rank: 1, of: len(crashes)}
	fewer := 0
	for _, c := range crashes {
		users = append(users, c.Users)
		if c.Signature == agg.Signature {
			continue
		}
		if c.Users > agg.Users {
			st.rank++
		}
		if c.Users < agg.Users {
			fewer++
		}
	}
	if st.of > 1 {
		st.below = float64(fewer) / float64(st.of-1)
	}
	sort.Ints(users)
	if n := len(users); n%2 == 1 {
		st.median = float64(users[n/2])
	} else {
		st.median = float64(users[n/2-1]+users[n/2]) / 2
	}
	return st
}

// topVersionShare is the largest share of active users on one version.
func topVersionShare(r Releases) float64 {
	top := 0.0
	for k := range r.ActiveUsersByVersion {
		if s, ok := versionShare(r, k); ok && IsVersion(k) && s > top {
			top = s
		}
	}
	return top
}

// severityOf rates a bug from its harm and from where its crash numbers
// fall in the project's own distribution, and gives the reasons.
//
// Harm first (any of these is never rated low):
//
//   - critical: data loss (something that holds the user's data lost,
//     wiped or reset); money taken and not delivered by a crash or error
//     among the project's most widespread;
//   - high: secrets or private data exposed; locked out of one's account
//     or unable to sign in; the app unusable; money taken wrongly (twice,
//     a wrong amount, to a wrong recipient, not delivered); a crash in a
//     core flow; a core flow that fails outright.
//
// Then the numbers: a crash is widespread when its signature is the
// crash log's top one by distinct users or above three quarters of the
// signatures (with at least two users), and common when above the
// median; it weighs more on a version among the most used (at least
// four fifths of the top version's share). A widespread crash, or a
// common one on a most-used version, is high; any other crash or broken
// feature medium; a cosmetic problem (how things look or sound) low.
// Widespread telemetry raises anything to high; the reporter calling it
// minor lowers by one, except for harm.
func severityOf(bag terms, text string, agg *CrashAggregate, crashes []CrashAggregate, rel Releases, version string, ev map[string]any) (string, []string) {
	has := func(c string) bool { return bag["~"+c] > 0 }
	users := 0
	if agg != nil {
		users = agg.Users
	}
	st := standingOf(agg, crashes)
	if agg != nil {
		ev["signature_rank"] = st.rank
		ev["signatures"] = st.of
		ev["median_users_per_signature"] = st.median
	}
	widespread := agg != nil && users >= 2 && st.of >= 2 && (st.rank == 1 || st.below >= 0.75)
	common := agg != nil && users >= 2 && float64(users) > st.median
	share, hasShare := versionShare(rel, version)
	top := topVersionShare(rel)
	mostUsed := hasShare && top > 0 && share >= 0.8*top
	crash := has("crash") || has("freeze") || has("blank_screen") || (agg != nil && signatureKindOf(agg.Signature) != kindError)
	core := inArea(bag, "core_flow")
	failure := has("broken") || has("error") || has("unable")
	money := len(inArea(bag, "money")) > 0
	dataLoss := dataLossCue(bag)
	undelivered := money && has("not_received")
	// Money taken wrongly is the user's money moved: a charge, payment or
	// transfer (not a price shown: a coupon counted twice lowers a total
	// and takes nothing), twice, wrong, to the wrong party or for nothing.
	moved := money && (has("charge") || has("transfer") || has("recipient"))
	moneyWrong := moved && (has("duplicate") || has("wrong") || has("recipient") || has("not_received"))
	security := has("security")
	lockout := has("lockout") || (has("login") && (has("unable") || has("broken") || has("error")))
	unusable := has("unusable")
	// The harm the intake found in the words (charged after cancelling,
	// billed twice, data destroyed, an account taken over...) is harm
	// here too: one definition, so a report kept as a bug for its harm
	// is never rated as if it had none.
	// The app dying or hanging is rated by the crash rules below (core
	// flow, spread), not as harm of its own.
	var spoken []string
	for _, h := range harmEvidence(boundText(text, 4<<10, 1<<10), has) {
		if !isCrashHarm(h) {
			spoken = append(spoken, h)
		}
	}
	// Secrets or private data reaching people who should not see them
	// ("shows every user's tokens to viewers") is an exposure even when
	// no security word is said.
	exposure := (has("credential") || has("password") || has("private")) && has("audience") && (has("display") || has("visible") || reSees.MatchString(text))
	security = security || exposure
	// A sum that turned into another sum ("12.34 became 1234.00") is a
	// wrong amount.
	moneyWrong = moneyWrong || (moved && reValueChanged.MatchString(text))
	harm := dataLoss || undelivered || moneyWrong || security || lockout || unusable || len(spoken) > 0
	// A harm or exposure word, even one that does not make the harm
	// above, is enough to keep a report off the cosmetic rule.
	harmWord := harm || has("security") || has("data_loss") || has("lockout") || has("unusable") || has("not_received") ||
		(money && (has("wrong") || has("duplicate") || has("recipient")))
	cosmetic := !crash && !harmWord && len(inArea(bag, "cosmetic")) > 0
	minor := reMinor.FindString(text)

	place := func() string {
		return fmt.Sprintf("%d distinct users, #%d of %d signatures by users (median %.0f)", users, st.rank, st.of, st.median)
	}
	var sev string
	var reasons []string
	switch {
	case dataLoss:
		sev = "critical"
		reasons = append(reasons, "data loss: the reporter's data was lost, wiped or reset")
	case undelivered && widespread:
		sev = "critical"
		reasons = append(reasons, "money taken without delivery, among the most widespread crashes ("+place()+")")
	case security:
		sev = "high"
		reasons = append(reasons, "security: secrets or private data exposed")
	case lockout:
		sev = "high"
		reasons = append(reasons, "the user is locked out of the account")
	case moneyWrong:
		sev = "high"
		reasons = append(reasons, "money taken wrongly (twice, a wrong amount or recipient, or not delivered)")
	case unusable:
		sev = "high"
		reasons = append(reasons, "the app is unusable")
	case len(spoken) > 0:
		sev = "high"
		reasons = append(reasons, "harm: "+strings.Join(spoken, "; "))
	case crash && len(core) > 0:
		sev = "high"
		reasons = append(reasons, "a crash blocks a core flow ("+strings.Join(core, ", ")+")")
	case crash && widespread:
		sev = "high"
		reasons = append(reasons, "a crash among the project's most widespread ("+place()+")")
	case crash && common && mostUsed:
		sev = "high"
		reasons = append(reasons, fmt.Sprintf("a crash above the median on a most-used version (%.0f%% of users, the top version has %.0f%%; %s)", share, top, place()))
	case crash:
		sev = "medium"
		reasons = append(reasons, "a crash outside the core flows")
	case len(core) > 0 && failure:
		sev = "high"
		reasons = append(reasons, "a core flow fails ("+strings.Join(core, ", ")+")")
	case cosmetic:
		sev = "low"
		reasons = append(reasons, "a cosmetic or minor malfunction")
	default:
		sev = "medium"
		reasons = append(reasons, "a broken feature")
	}
	if widespread && SeverityRank(sev) < SeverityRank("high") {
		sev = "high"
		reasons = append(reasons, "raised: among the crash log's most widespread signatures ("+place()+")")
	}
	if minor != "" && !harmWord && SeverityRank(sev) > 0 && !widespread {
		sev = Severities[SeverityRank(sev)-1]
		reasons = append(reasons, fmt.Sprintf("lowered: the reporter calls it %q", strings.ToLower(minor)))
	}
	// Harm is a floor: whatever the reporter calls it, data loss stays
	// critical and exposure, lockout or money taken wrongly stay high.
	floor := ""
	switch {
	case dataLoss:
		floor = "critical"
	case harm:
		floor = "high"
	}
	if floor != "" && SeverityRank(sev) < SeverityRank(floor) {
		sev = floor
		reasons = append(reasons, "harm is a floor: "+floor)
	}
	return sev, reasons
}

// reSees is someone seeing, viewing or reading something (eight languages).
var reSees = regexp.MustCompile(`(?i)\b(?:see|sees|seeing|saw|seen|view|views|viewing|viewed|read|reads|access|accessed|ve|ven|vio|ver|sieht|sehen|sah|gesehen|einsehen|voit|voient|voir|vu|v[êe]|veem|viu|vede|vedono|visto|ziet|zien|zag|gezien|widzi|widz[ąa]|widzia[łl]\w*)\b`)

// reValueChanged is a number that turned into another number, or one
// given instead of another.
var reValueChanged = regexp.MustCompile(`(?i)\d[\d.,]*\s*(?:[$€£]|eur|usd|gbp)?\s+(?:instead\s+of|en\s+lugar\s+de|en\s+vez\s+de|statt|anstatt|au\s+lieu\s+de|em\s+vez\s+de|ao\s+inv[ée]s\s+de|invece\s+di|in\s+plaats\s+van|zamiast|became|turned\s+into|changed\s+to|was\s+sent\s+as|went\s+out\s+as|se\s+convirti[óo]\s+en|pas[óo]\s+a\s+ser|wurde\s+zu|wurden\s+zu|est\s+devenu|sont\s+devenus|virou|se\s+tornou|passou\s+a|è\s+diventat[oa]|diventa|werd|werden|zmieni[łl]\w*\s+si[ęe]\s+w)\s+[$€£]?\s*\d`)

// reMinor is the reporter calling a problem small or not urgent (eight
// languages); it lowers only a report with no harm or exposure word.
var reMinor = regexp.MustCompile(`(?i)\blow\s+priority\b|\bno\s+rush\b|\bnot\s+urgent\b|\btiny\s+(?:issue|thing|bug)\b|\bbaja\s+prioridad\b|\bsin\s+prisa\b|\bno\s+es\s+urgente\b|\bniedrige\s+priorit[äa]t\b|\bnicht\s+dringend\b|\bkeine\s+eile\b|\bbasse\s+priorit[ée]\b|\bpas\s+urgent\b|\brien\s+ne\s+presse\b|\bbaixa\s+prioridade\b|\bn[ãa]o\s+[ée]\s+urgente\b|\bsem\s+pressa\b|\bbassa\s+priorit[àa]\b|\bnon\s+[èe]\s+urgente\b|\bnessuna\s+fretta\b|\blage\s+prioriteit\b|\bniet\s+dringend\b|\bgeen\s+haast\b|\bniski\s+priorytet\b|\bnie\s+pilne\b|\bbez\s+po[śs]piechu\b|\bminor\b|\bcosmetic\b|\bnot\s+a\s+big\s+deal\b|\bsmall\s+(?:issue|thing|bug)\b|\bslight(?:ly)?\b|\bnur\s+kosmetisch|\bkleinigkeit|\bmenor\b|\bleve\b|\bmineur\b|\bpas\s+grave\b|\bminore\b|\bpiccolo\s+problema\b|\bsin\s+importancia\b`)

// isCrashHarm reports a harm the intake names for the app dying or
// hanging.
func isCrashHarm(h string) bool {
	switch h {
	case "crash", "freeze", "blank_screen":
		return true
	}
	return false
}

// dataLossCue reports a loss word together with something that holds the
// user's data.
func dataLossCue(bag terms) bool {
	return bag["~data_loss"] > 0 && len(inArea(bag, "data")) > 0
}
