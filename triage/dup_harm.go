package triage

import "strings"

// Harm agreement: a report that names what the failure cost its user
// (money sent to a wrong party or taken wrongly, data lost, secrets or
// private data exposed, being locked out) describes a different bug from
// a ticket of the same feature that names no such harm, or another one:
// a payment that went to an old account is not the name-check warning of
// the same payee screen. The words alone make them look alike.
const (
	harmMoney uint8 = 1 << iota
	harmData
	harmExposure
	harmLockout
)

// evHarmDiff is the part when the report names a harm the ticket does not.
const evHarmDiff = 0.05

var harmNames = []string{"money", "data loss", "exposure", "lockout"}

// harmKinds is the set of harms a text's terms name (has reads a concept
// without its "~").
func harmKinds(has func(string) bool) uint8 {
	var m uint8
	money := false
	for _, c := range conceptAreas["money"] {
		money = money || has(c)
	}
	if money && (has("duplicate") || has("wrong") || has("not_received")) || has("recipient") && has("wrong") {
		m |= harmMoney
	}
	if has("data_loss") {
		for _, c := range conceptAreas["data"] {
			if has(c) {
				m |= harmData
				break
			}
		}
	}
	if has("security") {
		m |= harmExposure
	}
	if has("lockout") {
		m |= harmLockout
	}
	return m
}

// harmPart is −evHarmDiff when the report names a harm and the ticket
// names none of the report's harms. Data loss is also a failure kind of
// the symptom agreement: when that already counted the two as different
// kinds of failure, data loss is not counted again.
func harmPart(qx queryExtras, d *tdoc) (evidencePart, bool) {
	r := qx.harms
	if symptomAgreement(qx.symptoms, d.symptoms) < 0 {
		r &^= harmData
	}
	if r == 0 || r&d.harms != 0 {
		return evidencePart{}, false
	}
	var names []string
	for i, n := range harmNames {
		if r&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	what := "names no such harm"
	if d.harms != 0 {
		what = "names another harm"
	}
	return evidencePart{"report's harm " + strings.Join(names, ", ") + ", ticket " + what, -evHarmDiff}, true
}
