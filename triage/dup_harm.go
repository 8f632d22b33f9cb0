package triage

// Harm agreement (the block is in dup_block.go): a report that names what the failure cost its user
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
