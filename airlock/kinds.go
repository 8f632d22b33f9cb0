package airlock

import "slices"

// secretKind indexes kindNames, which is also the order Redact reports
// counts in.
type secretKind uint16

// The kinds the airlock's own detectors find, in the order of the Kind*
// constants.
const (
	kEmail secretKind = iota
	kPhone
	kCard
	kIBAN
	kAWSKey
	kJWT
	kPrivateKey
	kURLCredentials
	kAPIKey
	kPassword
	numHandKinds
)

var handKindNames = [numHandKinds]string{
	KindEmail, KindPhone, KindCard, KindIBAN, KindAWSKey, KindJWT, KindPrivateKey,
	KindURLCredentials, KindAPIKey, KindPassword,
}

// kindNames names every kind: the airlock's own, then the vendor rule set's
// (named after the rule), then the personal identifiers'.
var kindNames = func() []string {
	names := slices.Concat(handKindNames[:], vendorKindNames(), personalKindNames)
	if len(names) > 1<<16 {
		panic("airlock: too many redaction kinds")
	}
	return names
}()

// kindIndex maps a kind's name to its index.
var kindIndex = func() map[string]secretKind {
	m := make(map[string]secretKind, len(kindNames))
	for i, n := range kindNames {
		if _, dup := m[n]; dup {
			panic("airlock: redaction kind named twice: " + n)
		}
		m[n] = secretKind(i)
	}
	return m
}()

// kindNamed returns the kind called name, which must exist.
func kindNamed(name string) secretKind {
	k, ok := kindIndex[name]
	if !ok {
		panic("airlock: no redaction kind " + name)
	}
	return k
}

var placeholders = func() []string {
	p := make([]string, len(kindNames))
	for k, name := range kindNames {
		p[k] = "[" + name + "]"
	}
	return p
}()

// maxPlaceholder is the length of the longest placeholder.
var maxPlaceholder = func() int {
	n := 0
	for _, p := range placeholders {
		n = max(n, len(p))
	}
	return n
}()
