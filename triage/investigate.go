package triage

import (
	"fmt"
	"sort"
	"strings"
)

// InvestigateInput is everything the investigator has seen for one item:
// its intake record, its own tracker and batch search results, the crash
// log's ranking for it, and the tracker's tickets by id.
type InvestigateInput struct {
	Item        Item
	Intake      Intake
	TrackerHits []Hit
	BatchHits   []Hit
	Crashes     []CrashAggregate
	Tickets     map[string]Ticket
	// Own re-scores a candidate against the report's own query
	// (OwnEvidence): a duplicate is claimed only when the report's words
	// make it STRONG too, whatever query found it. nil: the hits are
	// taken as the report's own.
	Own func(id string) (Hit, bool)
}

// Investigation is the investigator's record: new, duplicate (of a ticket
// id or of "batch:<item id>") or needs_info. Resolved is the ticket a
// duplicate lands on once batch chains are followed. RegressionOf names a
// closed ticket the bug came back from.
type Investigation struct {
	Verdict      string  `json:"verdict"`
	DuplicateOf  string  `json:"duplicate_of,omitempty"`
	Resolved     string  `json:"resolved,omitempty"`
	Confidence   float64 `json:"confidence"`
	Signature    string  `json:"signature,omitempty"`
	RegressionOf string  `json:"regression_of,omitempty"`
	Rationale    string  `json:"rationale"`
}

// Investigate decides the verdict, respecting the guards itself:
//
//   - duplicate of the best STRONG hit (tracker or batch) that passes the
//     duplicate and regression guards; a closed ticket fixed before the
//     reporter's version is remembered as RegressionOf instead;
//   - otherwise new when the actionability guard passes, needs_info when
//     it does not.
//
// Confidence: a duplicate's is 0.5 + score/2, lowered by 0.15 when another
// strong hit that lands on a different ticket scores within 0.05; a new
// bug's falls from 0.95 as its best (non-regression) candidate approaches
// the strong floor, plus 0.05 when telemetry confirms a signature; a
// regression's is 0.85; needs_info is a rule and gets 0.8.
func Investigate(in InvestigateInput) Investigation {
	inv := Investigation{Signature: ConfirmedSignature(in.Crashes)}
	seen := append(append([]Hit(nil), in.TrackerHits...), in.BatchHits...)
	sort.SliceStable(seen, func(i, j int) bool { return seen[i].Score > seen[j].Score })
	version := in.Intake.AppVersion
	var why []string
	reg, regOK := strongRegression(seen, in.Tickets, version)
	bestOther, bestOtherID := 0.0, ""
	for _, h := range seen {
		target := h.ID
		if strings.HasPrefix(h.ID, BatchPrefix) {
			target = h.Resolves
		}
		t, isTicket := in.Tickets[target]
		if isTicket {
			if err := CheckRegression(t, version); err != nil {
				if h.Score >= StrongScore && inv.RegressionOf == "" {
					inv.RegressionOf = t.ID
					why = append(why, fmt.Sprintf("%s matches (%.2f) but was fixed in %s and the reporter is on %s: regression", t.ID, h.Score, *t.FixedIn, version))
				}
				continue
			}
		}
		outweighed := regOK && h.Score >= StrongScore && h.Words < reg.Words
		if outweighed && inv.Verdict == "" {
			why = append(why, fmt.Sprintf("%s (%.2f) is not claimed: its words match the report less (%.2f) than the regressed %s's (%.2f)", h.ID, h.Score, h.Words, reg.ID, reg.Words))
		}
		if outweighed || CheckDuplicate(h.ID, seen) != nil || target == "" || !ownStrong(in.Own, h.ID) {
			if h.Score > bestOther || bestOtherID == "" {
				bestOther, bestOtherID = h.Score, h.ID
			}
			continue
		}
		if inv.Verdict == "" {
			inv.Verdict = VerdictDuplicate
			inv.DuplicateOf = h.ID
			inv.Resolved = target
			inv.Confidence = 0.5 + h.Score/2
			why = append(why, fmt.Sprintf("duplicate of %s (score %.2f, STRONG): %s", h.ID, h.Score, strings.Join(h.Why, "; ")))
			if target != h.ID {
				why = append(why, fmt.Sprintf("%s resolved to %s", h.ID, target))
			}
			continue
		}
		other := h.Resolves
		if other == "" {
			other = h.ID
		}
		if other != inv.Resolved && seenScore(seen, inv.DuplicateOf)-h.Score < 0.05 {
			inv.Confidence -= 0.15
			why = append(why, fmt.Sprintf("%s (%.2f) is almost as close and lands on %s", h.ID, h.Score, other))
		}
	}
	if inv.Verdict == VerdictDuplicate {
		inv.Confidence = round3(clamp01(min(inv.Confidence, 0.98)))
		inv.Rationale = strings.Join(why, ". ")
		return inv
	}
	if err := CheckActionable(in.Intake, inv.Signature); err != nil {
		inv.Verdict = VerdictNeedsInfo
		inv.Confidence = 0.8
		inv.RegressionOf = ""
		inv.Rationale = fmt.Sprintf("no strong match (best %.2f) and nothing to act on: no device, app version, steps or telemetry-confirmed crash signature", bestOther)
		return inv
	}
	inv.Verdict = VerdictNew
	inv.Confidence = 0.95 - 0.45*min(1, bestOther/StrongScore)
	if inv.Signature != "" {
		inv.Confidence += 0.05
	}
	if inv.RegressionOf != "" {
		inv.Confidence = max(inv.Confidence, 0.85)
	}
	inv.Confidence = round3(clamp01(min(inv.Confidence, 0.95)))
	for _, h := range seen {
		// A candidate blocked from being the duplicate (dup_block.go)
		// that would have been STRONG is linked, so whoever reads the new
		// ticket sees the open one of the same feature.
		if h.Related != "" && h.Unblocked >= StrongScore {
			why = append(why, fmt.Sprintf("possibly related: %s (%.2f before the block; not a duplicate because %s)", h.ID, h.Unblocked, h.Related))
		}
	}
	if bestOtherID != "" {
		why = append(why, fmt.Sprintf("no strong duplicate: the best other candidate, %s, scored %.2f", bestOtherID, bestOther))
	} else {
		why = append(why, "no other candidate in the tracker or this batch")
	}
	if inv.Signature != "" {
		for _, a := range in.Crashes {
			if a.Signature == inv.Signature {
				why = append(why, fmt.Sprintf("telemetry confirms %s (%d events, %d users, score %.2f)", a.Signature, a.Events, a.Users, a.Score))
				break
			}
		}
	}
	inv.Rationale = strings.Join(why, ". ")
	return inv
}

// strongRegression returns the best STRONG hit on a closed ticket fixed
// before the reporter's version (the bug came back). Such a match is a
// regression, and it outweighs a STRONG match to any other ticket or
// earlier report whose words match the report less than the regressed
// ticket's do: telemetry, device and version can make a fresh ticket of
// another bug on the same screen look STRONG, but the report describes
// the closed bug. An earlier report of the same regression speaks the
// reporter's language and matches at least as well in words, so a second
// report of it still joins the first.
func strongRegression(seen []Hit, tickets map[string]Ticket, version string) (Hit, bool) {
	for _, h := range seen {
		if h.Score < StrongScore || strings.HasPrefix(h.ID, BatchPrefix) {
			continue
		}
		if t, ok := tickets[h.ID]; ok && CheckRegression(t, version) != nil {
			return h, true
		}
	}
	return Hit{}, false
}

// ownStrong reports whether candidate id is STRONG for the report's own
// query (always, when there is no re-scoring).
func ownStrong(own func(string) (Hit, bool), id string) bool {
	if own == nil {
		return true
	}
	h, ok := own(id)
	return CheckOwnEvidence(id, h, ok) == nil
}

func seenScore(seen []Hit, id string) float64 {
	for _, h := range seen {
		if h.ID == id {
			return h.Score
		}
	}
	return 0
}
