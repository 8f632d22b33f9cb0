package triage_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

func strp(s string) *string { return &s }

// wantRefusal checks a guard's answer: nil when want is "", otherwise a
// refusal (wrapping ErrGuard) whose message contains every fragment of
// want, separated by "|".
func wantRefusal(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want a refusal mentioning %q", want)
	}
	if !errors.Is(err, triage.ErrGuard) {
		t.Errorf("error %v does not wrap ErrGuard", err)
	}
	for _, frag := range strings.Split(want, "|") {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("refusal %q lacks %q", err, frag)
		}
	}
}

func TestCheckDuplicate(t *testing.T) {
	t.Parallel()
	seen := []triage.Hit{
		{ID: "AB-7", Score: 0.91, Strong: true},
		{ID: "AB-3", Score: 0.45},
		{ID: "batch:X-1", Score: 0.78, Strong: true, Resolves: "NEW-1"},
		{ID: "AB-9", Score: triage.StrongScore, Strong: true},
	}
	floor := fmt.Sprintf("%.2f", triage.StrongScore)
	for _, tc := range []struct {
		name, claim, want string
	}{
		{"strong tracker hit", "AB-7", ""},
		{"strong batch hit", "batch:X-1", ""},
		{"batch hit named without its prefix", "X-1", ""},
		{"exactly at the floor", "AB-9", ""},
		{"case and spaces do not matter", "  ab-7 ", ""},
		{"model insists on a weak duplicate", "AB-3", "AB-3 scored 0.45|below the " + floor + "|weak|cite a STRONG hit|change the verdict to new"},
		{"model names a ticket it never saw", "AB-1234", "you never saw AB-1234 in this item's search results|cite a STRONG hit|AB-7 0.91|change the verdict to new"},
		{"model names another item's batch entry", "batch:X-9", "you never saw batch:X-9"},
		{"empty claim", "", "needs duplicate_of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRefusal(t, triage.CheckDuplicate(tc.claim, seen), tc.want)
		})
	}
	t.Run("a STRONG label on a weak score does not count", func(t *testing.T) {
		t.Parallel()
		// The floor is on the evidence score the server computed, not on
		// a label a caller could set.
		wantRefusal(t, triage.CheckDuplicate("AB-5", []triage.Hit{{ID: "AB-5", Score: triage.StrongScore - 0.01, Strong: true}}), "below the "+floor)
	})
	t.Run("no strong hit at all", func(t *testing.T) {
		t.Parallel()
		wantRefusal(t, triage.CheckDuplicate("AB-3", []triage.Hit{{ID: "AB-3", Score: 0.4}}), "there are none")
	})
}

func TestResolveChain(t *testing.T) {
	t.Parallel()
	resolves := map[string]string{"I-1": "NEW-1", "I-2": "NEW-1", "I-3": "batch:I-2", "I-4": "", "I-5": "batch:I-6", "I-6": "batch:I-5", "I-7": "AB-12"}
	for _, tc := range []struct{ name, id, want string }{
		{"ticket id stays", "AB-12", "AB-12"},
		{"batch hit resolves to its ticket", "batch:I-1", "NEW-1"},
		{"bare item id resolves too", "I-2", "NEW-1"},
		{"chain of batch duplicates lands on one ticket", "batch:I-3", "NEW-1"},
		{"duplicate of an existing ticket", "batch:I-7", "AB-12"},
		{"item that resolved to no ticket", "batch:I-4", ""},
		{"unknown batch item", "batch:I-99", ""},
		{"cycle", "batch:I-5", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := triage.ResolveChain(tc.id, resolves); got != tc.want {
				t.Fatalf("ResolveChain(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}

func TestCheckRegression(t *testing.T) {
	t.Parallel()
	closed := func(fixed string) triage.Ticket {
		return triage.Ticket{ID: "AB-110", Status: "closed", FixedIn: strp(fixed)}
	}
	for _, tc := range []struct {
		name     string
		ticket   triage.Ticket
		reporter string
		want     string
	}{
		{"fixed before the reporter's version: regression", closed("2.3.5"), "2.3.9", "AB-110 was closed as fixed in 2.3.5|reporter is on 2.3.9|regression|file a new ticket that references AB-110"},
		{"numeric, not lexical, order", closed("2.9"), "2.10.0", "fixed in 2.9"},
		{"v prefix", closed("v2.4"), "2.4.1", "regression"},
		{"reporter on the fixed version", closed("2.4.1"), "2.4.1", ""},
		{"reporter older than the fix: still the same bug", closed("2.5.0"), "2.4.1", ""},
		{"open ticket is never a regression", triage.Ticket{ID: "AB-1", Status: "open"}, "9.9.9", ""},
		{"closed without fixed_in", triage.Ticket{ID: "AB-2", Status: "closed"}, "2.4.1", ""},
		{"reporter version unknown", closed("2.3.5"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRefusal(t, triage.CheckRegression(tc.ticket, tc.reporter), tc.want)
		})
	}
}

func TestCheckActionable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   triage.Intake
		sig  string
		want string
	}{
		{"device", triage.Intake{Device: "Pixel 8"}, "", ""},
		{"app version", triage.Intake{AppVersion: "2.4.1"}, "", ""},
		{"steps", triage.Intake{Steps: []string{"Tap Export"}}, "", ""},
		{"telemetry-confirmed signature", triage.Intake{}, "NPE:Foo.bar", ""},
		{"an OS alone is not enough", triage.Intake{OS: "Android 14"}, "", "needs_info"},
		{"nothing to act on", triage.Intake{Language: "en"}, "", "not actionable|needs_info|device|app version|steps"},
		{"blank values do not count", triage.Intake{Device: " ", AppVersion: "\t"}, " ", "needs_info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRefusal(t, triage.CheckActionable(tc.in, tc.sig), tc.want)
		})
	}
}

func TestResolveTicketID(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"AB-104": true, "NEW-1": true}
	items := map[string]string{"FX-001": "NEW-1", "FX-002": "NEW-1", "FX-006": "AB-104", "FX-008": ""}
	for _, tc := range []struct{ name, id, want, refusal string }{
		{"ticket id", "AB-104", "AB-104", ""},
		{"created ticket", "NEW-1", "NEW-1", ""},
		{"feedback id of a report that created a ticket", "FX-001", "NEW-1", ""},
		{"feedback id of a duplicate", "FX-006", "AB-104", ""},
		{"batch id", "batch:FX-002", "NEW-1", ""},
		{"ticket id in another case", "ab-104", "AB-104", ""},
		{"feedback id of a report with no ticket", "FX-008", "", "is a feedback id, not a ticket id"},
		{"unknown id", "FX-999", "", "FX-999 is not a ticket|use the ticket id from the investigation"},
		{"empty", "", "", "no ticket id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := triage.ResolveTicketID(tc.id, known, items)
			wantRefusal(t, err, tc.refusal)
			if got != tc.want {
				t.Fatalf("ResolveTicketID(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}

func TestCheckComponentAndOwnerOf(t *testing.T) {
	t.Parallel()
	owners := triage.ParseCodeOwners("# c team\npayments  team-pay  #pay\nsearch team-find\n")
	for _, tc := range []struct{ name, c, team, refusal string }{
		{"listed", "payments", "team-pay", ""},
		{"other case", "Search", "team-find", ""},
		{"not in CODEOWNERS", "billing", "", `component "billing" is not in CODEOWNERS|payments, search`},
		{"empty", "", "", "no component given|payments, search"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRefusal(t, triage.CheckComponent(tc.c, owners), tc.refusal)
			o, err := triage.OwnerOf(tc.c, owners)
			wantRefusal(t, err, tc.refusal)
			if o.Team != tc.team {
				t.Fatalf("OwnerOf(%q).Team = %q, want %q", tc.c, o.Team, tc.team)
			}
		})
	}
}

// TestInvestigateRespectsGuards drives the investigator with crafted
// search results: it must never claim a weak hit, must turn a fixed-and-
// closed match into a regression, and must ask for info when nothing is
// actionable.
func TestInvestigateRespectsGuards(t *testing.T) {
	t.Parallel()
	tickets := map[string]triage.Ticket{
		"AB-1": {ID: "AB-1", Status: "open"},
		"AB-2": {ID: "AB-2", Status: "closed", FixedIn: strp("1.2.0")},
		"AB-3": {ID: "AB-3", Status: "closed", FixedIn: strp("2.0.0")},
	}
	actionable := triage.Intake{Category: "bug", Device: "Pixel 8", AppVersion: "1.5.0"}
	for _, tc := range []struct {
		name        string
		in          triage.Intake
		tracker     []triage.Hit
		batch       []triage.Hit
		verdict     string
		dup, regr   string
		maxConfNew  float64
		minConfDupe float64
	}{
		{"weak hit is never claimed", actionable, []triage.Hit{{ID: "AB-1", Score: triage.StrongScore - 0.01}}, nil, "new", "", "", 0.6, 0},
		{"strong open ticket", actionable, []triage.Hit{{ID: "AB-1", Score: 0.8, Strong: true}}, nil, "duplicate", "AB-1", "", 0, 0.85},
		{"closed and fixed before the reporter's version", actionable, []triage.Hit{{ID: "AB-2", Score: 0.9, Strong: true}}, nil, "new", "", "AB-2", 1, 0},
		{"closed but fixed after the reporter's version", actionable, []triage.Hit{{ID: "AB-3", Score: 0.9, Strong: true}}, nil, "duplicate", "AB-3", "", 0, 0.9},
		{"regression does not hide a strong open duplicate", actionable, []triage.Hit{{ID: "AB-2", Score: 0.95, Strong: true}, {ID: "AB-1", Score: 0.7, Strong: true}}, nil, "duplicate", "AB-1", "AB-2", 0, 0.8},
		{"batch hit resolving to a new ticket", actionable, nil, []triage.Hit{{ID: "batch:I-1", Score: 0.8, Strong: true, Resolves: "NEW-1"}}, "duplicate", "batch:I-1", "", 0, 0.85},
		{"nothing actionable", triage.Intake{Category: "bug"}, []triage.Hit{{ID: "AB-1", Score: 0.3}}, nil, "needs_info", "", "", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := triage.Investigate(triage.InvestigateInput{Intake: tc.in, TrackerHits: tc.tracker, BatchHits: tc.batch, Tickets: tickets})
			if inv.Verdict != tc.verdict || inv.DuplicateOf != tc.dup || inv.RegressionOf != tc.regr {
				t.Fatalf("got %s dup=%q regression=%q, want %s dup=%q regression=%q (%s)", inv.Verdict, inv.DuplicateOf, inv.RegressionOf, tc.verdict, tc.dup, tc.regr, inv.Rationale)
			}
			if inv.Verdict == "duplicate" {
				if err := triage.CheckDuplicate(inv.DuplicateOf, append(tc.tracker, tc.batch...)); err != nil {
					t.Fatalf("investigator claimed what the guard refuses: %v", err)
				}
				if inv.Confidence < tc.minConfDupe {
					t.Errorf("confidence %.2f < %.2f", inv.Confidence, tc.minConfDupe)
				}
			}
			if inv.Verdict == "new" && inv.Confidence > tc.maxConfNew {
				t.Errorf("confidence %.2f > %.2f", inv.Confidence, tc.maxConfNew)
			}
			if inv.Rationale == "" {
				t.Error("no rationale")
			}
		})
	}
}

// notesTracker is an invented notes app's tracker for the duplicate
// evidence tests.
func notesTracker() *triage.TrackerIndex {
	return triage.NewTrackerIndex([]triage.Ticket{
		{ID: "N-1", Title: "Export to PDF produces a blank page for long documents", Status: "open", Component: "export", Description: "When a document has more than 40 pages the exported PDF has a blank last page. Reproduction: open a long document, tap Export, choose PDF."},
		{ID: "N-2", Title: "Push notifications arrive twice after reinstalling", Status: "open", Component: "notifications", Description: "After a reinstallation every notification is delivered two times. Investigation pending."},
		{ID: "N-3", Title: "Login button does nothing on the welcome screen", Status: "open", Component: "auth", Description: "Tapping the login button on the welcome screen has no effect; no error is shown."},
		{ID: "N-4", Title: "Search results ignore the date filter", Status: "open", Component: "search", Description: "Selecting a date range in the filter returns results from every date."},
	})
}

// A duplicate claim is judged on the report's own words: a ticket its own
// title finds STRONG is refused for a report about something else, and
// stands for a report that does describe it.
func TestOwnEvidenceRefusesQueryShapedClaim(t *testing.T) {
	t.Parallel()
	ix := notesTracker()
	title, _ := ix.Ticket("N-2")
	byTitle := ix.Search(triage.Query{Text: title.Title}, 5)
	if len(byTitle) == 0 || byTitle[0].ID != "N-2" || !byTitle[0].Strong {
		t.Fatalf("precondition: the title search should find N-2 STRONG: %+v", byTitle)
	}
	if err := triage.CheckDuplicate("N-2", byTitle); err != nil {
		t.Fatalf("precondition: the first half of the guard accepts it: %v", err)
	}
	tests := []struct{ name, report, want string }{
		{"unrelated report", "The search box ignores my date range and shows notes from every year.", "the report's own text"},
		{"empty report", "", "does not match the report's own text"},
		{"the same bug", "Since I reinstalled the app every push notification arrives twice.", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			own, found := triage.OwnEvidence("N-2", triage.Query{Text: tc.report}, ix, nil)
			wantRefusal(t, triage.CheckOwnEvidence("N-2", own, found), tc.want)
		})
	}
	// A batch claim is re-scored against the earlier report the same way.
	b := triage.NewBatch()
	b.Add("I-1", triage.Query{Text: "Push notifications arrive twice after reinstalling"}, "N-9")
	own, found := triage.OwnEvidence("batch:I-1", triage.Query{Text: "The search box ignores my date range."}, ix, b)
	wantRefusal(t, triage.CheckOwnEvidence("batch:I-1", own, found), "the report's own text")
}

// Symptom stuffing: naming every failure kind there is earns no symptom
// agreement with a ticket, so it cannot lift an unrelated ticket.
func TestSymptomStuffingEarnsNothing(t *testing.T) {
	t.Parallel()
	ix := notesTracker()
	plain, _ := ix.Rescore(triage.Query{Text: "the date filter is ignored in search"}, "N-4")
	stuffed, _ := ix.Rescore(triage.Query{Text: "the date filter is ignored in search, it crashes, freezes, is slow, shows the wrong value, loses my data, logs me out, shows an error and disconnects"}, "N-4")
	for _, w := range stuffed.Why {
		if strings.Contains(w, "same kind of failure") {
			t.Errorf("a report naming every failure kind earned the agreement: %v", stuffed.Why)
		}
	}
	if stuffed.Score > plain.Score {
		t.Errorf("stuffing symptom words raised the score %.3f -> %.3f", plain.Score, stuffed.Score)
	}
}

// Title stuffing: a report that repeats a ticket's title words but
// describes another failure on another platform is not its duplicate,
// however many of the title's words it carries; the same words with the
// ticket's failure and platform are. (Not covered: a report that pastes
// the whole title, failure word included, and then denies it; the words
// then agree on the failure and only the platform disagrees.)
func TestTitleStuffingStaysBelowTheFloor(t *testing.T) {
	t.Parallel()
	ix := triage.NewTrackerIndex([]triage.Ticket{
		{ID: "P-1", Title: "Photo album export crashes the app on Android 14", Status: "open", Component: "export", Description: "Exporting an album of more than 200 photos closes the app on Android 14 devices."},
		{ID: "P-2", Title: "Shared album invitations never arrive", Status: "open", Component: "sharing", Description: "Invited friends do not get the invitation email."},
		{ID: "P-3", Title: "Face grouping merges two different people", Status: "open", Component: "faces", Description: "People view shows one person for two faces."},
		{ID: "P-4", Title: "Slideshow music stops after the first photo", Status: "open", Component: "slideshow", Description: "Background music ends when the second slide appears."},
		{ID: "P-5", Title: "Backup to cloud stalls at 99 percent", Status: "open", Component: "backup", Description: "The upload progress stops just before completion."},
		{ID: "P-6", Title: "Album cover picks a blurry photo", Status: "open", Component: "albums", Description: "The automatic cover is often out of focus."},
	})
	for _, tc := range []struct {
		name   string
		q      triage.Query
		strong bool
	}{
		{"title words, another failure, another platform", triage.Query{Text: "Photo album export in the app is very slow: exporting my album takes ten minutes.", OS: "iOS 18.1"}, false},
		{"the title twice over, another failure", triage.Query{Text: "photo album export app android photo album export app android album export photo: the exported album has the wrong dates on every photo", OS: "iOS 18.1"}, false},
		{"the same bug in other words", triage.Query{Text: "Whenever I export a big album (300 photos) the app just closes. Pixel 8, Android 14.", OS: "Android 14"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, ok := ix.Rescore(tc.q, "P-1")
			if !ok {
				t.Fatal("P-1 is not a candidate")
			}
			if h.Strong != tc.strong || (h.Score >= triage.StrongScore) != tc.strong {
				t.Errorf("P-1 scores %.3f (floor %.2f), want strong=%v: %v", h.Score, triage.StrongScore, tc.strong, h.Why)
			}
		})
	}
}
