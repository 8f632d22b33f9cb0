package triage_test

import (
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// TestSameScreenDifferentBug: the demo shop's three bugs (the model walk
// files all three), each told with
// its own concrete facts (a coupon code and prices, a coupon code and a
// negative total, API fields and integers too large). The third shares
// the screen, the failure kind and a negative number with the second, but
// no concrete token: it is a new bug, whether the earlier ones are in the
// batch memory or filed into the tracker.
func TestSameScreenDifferentBug(t *testing.T) {
	t.Parallel()
	meta := func(device, os string) triage.Metadata {
		return triage.Metadata{Device: device, OS: os, AppVersion: "1.0.0"}
	}
	d := triage.Dataset{
		Owners: []triage.Owner{{Component: "cart", Team: "checkout"}, {Component: "server", Team: "platform"}},
		Releases: triage.Releases{CurrentVersion: "1.0.0", Releases: []triage.Release{{Version: "1.0.0", Date: "2026-01-05"}},
			ActiveUsersByVersion: map[string]float64{"1.0.0": 100}},
		Items: []triage.Item{
			{ID: "A", ReceivedAt: "2026-02-01T10:00:00Z", Metadata: meta("Firefox 133", "Linux"),
				Text: "Coupon SAVE10 is applied twice at checkout: my 100.00 lamp cost 81.00 instead of 90.00."},
			{ID: "B", ReceivedAt: "2026-02-01T11:00:00Z", Metadata: meta("Safari 18", "macOS 15"),
				Text: "Negative total at checkout: coupon SAVE300 on my 2.00 sticker made the total -1.00. A total should never go below zero."},
			{ID: "C", ReceivedAt: "2026-02-01T12:00:00Z", Metadata: meta("curl 8.5", "Debian 13"),
				Text: "Bulk order through the checkout API: two lines at price_cents 5000000000000000000, quantity 1 each, came back with total_cents -8446744073709551616 instead of an error."},
		},
	}
	for name, results := range map[string][]triage.Result{"batch": triage.RunBatch(d), "filed": runFilingTickets(d)} {
		for _, r := range results {
			if r.Outcome != triage.OutcomeNewTicket {
				t.Errorf("%s: %s is %s (of %s), want a new ticket", name, r.ItemID, r.Outcome, r.DuplicateOf)
			}
		}
	}
}
