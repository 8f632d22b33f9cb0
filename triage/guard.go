package triage

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The guards are what the server's tools apply to a role's claims,
// whatever the model says. Each returns nil when the claim stands, or an
// error whose message tells the model what to do instead; the tool returns
// that message as its result. They are pure: the caller passes the
// evidence (this item's search results, the tracker, CODEOWNERS).

// ErrGuard is wrapped by every guard refusal, so callers can tell a
// refusal (the model must change its claim) from a malformed call.
var ErrGuard = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrGuard, fmt.Sprintf(format, args...))
}

// FindHit returns the hit of seen that claim names: a ticket id, a batch
// hit id "batch:<item>", or a bare item id that appears as a batch hit
// (small models drop the prefix). Comparison ignores case and spaces.
func FindHit(claim string, seen []Hit) (Hit, bool) {
	c := strings.ToLower(strings.TrimSpace(claim))
	if c == "" {
		return Hit{}, false
	}
	for _, h := range seen {
		if strings.ToLower(h.ID) == c {
			return h, true
		}
	}
	for _, h := range seen {
		if strings.ToLower(strings.TrimPrefix(h.ID, BatchPrefix)) == strings.TrimPrefix(c, BatchPrefix) {
			return h, true
		}
	}
	return Hit{}, false
}

// CheckDuplicate is the duplicate-claim guard: a duplicate verdict is
// accepted only for a candidate that appeared in this item's own search
// results (tracker and batch) with a score of at least StrongScore. It
// cannot promote a weak match, and it cannot name a ticket it never saw.
func CheckDuplicate(claim string, seen []Hit) error {
	if strings.TrimSpace(claim) == "" {
		return refuse("a duplicate verdict needs duplicate_of: cite a STRONG hit from this item's search results, or change the verdict to new")
	}
	h, ok := FindHit(claim, seen)
	if !ok {
		return refuse("you never saw %s in this item's search results; cite a STRONG hit (%s) or change the verdict to new", claim, strongList(seen))
	}
	if h.Score < StrongScore {
		return refuse("%s scored %.2f in this item's search results, below the %.2f a duplicate needs (it is a weak match); cite a STRONG hit (%s) or change the verdict to new", h.ID, h.Score, StrongScore, strongList(seen))
	}
	return nil
}

func strongList(seen []Hit) string {
	var s []string
	for _, h := range seen {
		if h.Score >= StrongScore {
			s = append(s, fmt.Sprintf("%s %.2f", h.ID, h.Score))
		}
	}
	if len(s) == 0 {
		return "there are none"
	}
	return strings.Join(s, ", ")
}

// ResolveChain follows a duplicate target to the ticket it lands on. A
// ticket id is returned as is; "batch:X" (or X itself when it is a key of
// batchResolves) resolves to the ticket item X resolved to, following
// chains of batch duplicates. It returns "" when the chain leads nowhere
// (an item that resolved to no ticket, or a cycle).
func ResolveChain(id string, batchResolves map[string]string) string {
	cur := strings.TrimSpace(id)
	for range len(batchResolves) + 1 {
		key := strings.TrimPrefix(cur, BatchPrefix)
		next, ok := batchResolves[key]
		if !ok {
			next, ok = batchResolves[cur]
		}
		if !ok {
			if strings.HasPrefix(cur, BatchPrefix) {
				return ""
			}
			return cur
		}
		if next == "" {
			return ""
		}
		cur = next
	}
	return ""
}

// CheckRegression is the regression guard: a closed ticket whose fixed_in
// version is older than the reporter's version cannot be the duplicate,
// because the bug came back after the fix. When the reporter's version is
// unknown the claim cannot be refuted and stands.
func CheckRegression(t Ticket, reporterVersion string) error {
	if !isClosed(t) || t.FixedIn == nil || strings.TrimSpace(*t.FixedIn) == "" || strings.TrimSpace(reporterVersion) == "" {
		return nil
	}
	if CompareVersions(*t.FixedIn, reporterVersion) < 0 {
		return refuse("%s was closed as fixed in %s but the reporter is on %s, so the bug came back: this is a regression, not a duplicate. Set the verdict to new and file a new ticket that references %s (regression_of=%s)",
			t.ID, *t.FixedIn, reporterVersion, t.ID, t.ID)
	}
	return nil
}

// CheckActionable is the actionability guard: a verdict of new needs a
// device, an app version, reproduction steps or a crash signature that
// telemetry confirmed. Without any of them engineering cannot act.
func CheckActionable(in Intake, confirmedSignature string) error {
	if strings.TrimSpace(in.Device) != "" || strings.TrimSpace(in.AppVersion) != "" || len(in.Steps) > 0 || strings.TrimSpace(confirmedSignature) != "" {
		return nil
	}
	return refuse("not actionable: the report has no device, no app version, no reproduction steps and no crash signature confirmed in telemetry. Set the verdict to needs_info; the writer will ask the reporter for their device, OS, app version and the steps that lead to the problem")
}

// ResolveTicketID is the ticket-id guard: the writer must address a ticket,
// not a feedback item. A known ticket id is returned as is; a feedback id
// (bare or "batch:<id>") is resolved to the ticket that item created or
// duplicated; anything else is refused.
func ResolveTicketID(id string, known map[string]bool, itemToTicket map[string]string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", refuse("no ticket id given; use the ticket id from the investigation")
	}
	if known[id] {
		return id, nil
	}
	key := strings.TrimPrefix(id, BatchPrefix)
	if _, ok := itemToTicket[key]; ok {
		t := ResolveChain(key, itemToTicket)
		if t != "" && (known == nil || known[t]) {
			return t, nil
		}
		return "", refuse("%s is a feedback id, not a ticket id, and it resolved to no ticket; a report that needs info has no ticket to comment on", id)
	}
	for k := range known {
		if strings.EqualFold(k, id) {
			return k, nil
		}
	}
	return "", refuse("%s is not a ticket in this tracker (and not a feedback id of this batch); use the ticket id from the investigation (duplicate_of, resolved to its ticket)", id)
}

// CheckComponent is the component guard: the component must exist in
// CODEOWNERS.
func CheckComponent(c string, owners []Owner) error {
	if _, err := OwnerOf(c, owners); err != nil {
		return err
	}
	return nil
}

// OwnerOf returns the CODEOWNERS entry of a component (exact name, or the
// same name in another case).
func OwnerOf(component string, owners []Owner) (Owner, error) {
	c := strings.TrimSpace(component)
	for _, o := range owners {
		if o.Component == c {
			return o, nil
		}
	}
	for _, o := range owners {
		if strings.EqualFold(o.Component, c) {
			return o, nil
		}
	}
	names := make([]string, 0, len(owners))
	for _, o := range owners {
		names = append(names, o.Component)
	}
	sort.Strings(names)
	if c == "" {
		return Owner{}, refuse("no component given; choose one of CODEOWNERS: %s", strings.Join(names, ", "))
	}
	return Owner{}, refuse("component %q is not in CODEOWNERS; choose one of: %s", c, strings.Join(names, ", "))
}
