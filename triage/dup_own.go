package triage

import "strings"

// A duplicate claim is judged on the report, not on the query that found
// the candidate. The investigator's query text is whatever the model
// sends: searching with a ticket's own title makes that ticket STRONG for
// any report. So before a duplicate verdict stands, the claimed candidate
// is re-scored against the report's own query (the server's record of the
// item's text, its device, OS and version, and the crash signature
// telemetry confirms for it), and the claim stands only if that score
// clears StrongScore too. The model's query only finds candidates.

// OwnEvidence returns the claimed candidate's hit for the report's own
// query: a tracker ticket re-scored by ix (Rescore), or a batch hit
// ("batch:<item>", or a bare item id) of b's search for it. found is false
// when own does not reach the candidate at all.
func OwnEvidence(claim string, own Query, ix *TrackerIndex, b *Batch) (Hit, bool) {
	c := strings.TrimSpace(claim)
	if c == "" {
		return Hit{}, false
	}
	if ix != nil && !strings.HasPrefix(strings.ToLower(c), BatchPrefix) {
		if h, ok := ix.Rescore(own, c); ok {
			return h, true
		}
		for id := range ix.byID {
			if strings.EqualFold(id, c) {
				return ix.Rescore(own, id)
			}
		}
	}
	if b != nil {
		if h, ok := FindHit(c, b.SearchIndexed(own, 0, ix)); ok {
			return h, true
		}
	}
	return Hit{}, false
}

// CheckOwnEvidence is the duplicate guard's second half: the candidate
// claimed (already a STRONG hit of this item's searches, CheckDuplicate)
// must be STRONG for the report's own words as well (own, from
// OwnEvidence).
func CheckOwnEvidence(claim string, own Hit, found bool) error {
	if !found {
		return refuse("%s does not match the report's own text (the search that found it used other words); a duplicate must match what the reporter wrote. Change the verdict to new", claim)
	}
	if own.Score < StrongScore {
		return refuse("%s scores %.2f against the report's own text, below the %.2f a duplicate needs (the search that found it used other words than the reporter's); change the verdict to new", claim, own.Score, StrongScore)
	}
	return nil
}
