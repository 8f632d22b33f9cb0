package triage_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

const orbitDir = "../samples/orbit_run" // a copy of shared/datasets/orbit_run, kept so CI always has it

// loadOrbit loads the orbit_run sample, or skips when it is not checked
// out next to this repository.
func loadOrbit(tb testing.TB) triage.Dataset {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(orbitDir, "expected.json")); err != nil {
		tb.Fatalf("orbit_run dataset not found at %s", orbitDir)
	}
	d, err := triage.LoadDataset(os.DirFS(orbitDir))
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestOrbitRunScoresEveryItem(t *testing.T) {
	t.Parallel()
	d := loadOrbit(t)
	results := triage.RunBatch(d)
	rows, score, total := triage.Evaluate(d, results)
	t.Logf("\n%s", triage.FormatTable(rows, score, total))
	if total != len(d.Expected) || total == 0 {
		t.Fatalf("scored %d items, dataset expects %d", total, len(d.Expected))
	}
	if score != total {
		t.Fatalf("score %d/%d", score, total)
	}
}

func TestOrbitRunHasNoGuardRefusals(t *testing.T) {
	t.Parallel()
	d := loadOrbit(t)
	for _, r := range triage.Run(d) {
		if len(r.Refusals) > 0 {
			t.Errorf("%s: the investigator made a claim the guards refuse: %v", r.Item.ID, r.Refusals)
		}
		if r.Result.Outcome == triage.OutcomeNewTicket {
			if r.Assessment == nil || r.Action == nil || r.Action.Kind != triage.ActionCreateTicket {
				t.Errorf("%s: new ticket without assessment or draft", r.Item.ID)
				continue
			}
			// The rationale argues from numbers: events, users, version
			// share and days to the code freeze.
			for _, want := range []string{"events", "distinct users", "% of active users", "code freeze"} {
				if !strings.Contains(r.Assessment.Rationale, want) {
					t.Errorf("%s: rationale lacks %q: %s", r.Item.ID, want, r.Assessment.Rationale)
				}
			}
		}
		if r.Result.Outcome == triage.OutcomeDuplicate && (r.Action == nil || r.Action.Kind != triage.ActionComment || r.Action.TicketID != r.Result.Ticket) {
			t.Errorf("%s: duplicate without a comment on %s: %+v", r.Item.ID, r.Result.Ticket, r.Action)
		}
		if r.Result.Outcome == triage.OutcomeNeedsInfo && (r.Action == nil || r.Action.Kind != triage.ActionClarify) {
			t.Errorf("%s: needs_info without a clarification: %+v", r.Item.ID, r.Action)
		}
	}
}

// TestNoDatasetIdentifiersInCode keeps the decision core free of anything
// specific to the sample: no item or ticket id, crash signature, product,
// company, team, channel or sample phrase may appear in a non-test source
// file of this package.
func TestNoDatasetIdentifiersInCode(t *testing.T) {
	t.Parallel()
	d := loadOrbit(t)
	forbidden := map[string]bool{}
	add := func(s string) {
		s = strings.ToLower(strings.TrimSpace(s))
		if len(s) >= 3 {
			forbidden[s] = true
		}
	}
	for _, it := range d.Items {
		add(it.ID)
		add(it.Author)
	}
	for _, tk := range d.Tickets {
		add(tk.ID)
		add(tk.Owner)
	}
	ident := regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]{3,}`)
	for _, c := range d.Crashes {
		add(c.Signature)
		for _, part := range strings.Split(c.Signature, ":") {
			if len(part) >= 6 {
				add(part)
			}
		}
		for _, w := range ident.FindAllString(c.Signature+" "+c.StackTop, -1) {
			// CamelCase identifiers of the sample's code (ShopScreen,
			// renderFeatured), not plain words.
			if regexp.MustCompile(`[a-z][A-Z]`).MatchString(w) {
				add(w)
			}
		}
	}
	add(d.Releases.Product)
	add(d.Releases.Company)
	for _, w := range strings.Fields(d.Releases.Product + " " + d.Releases.Company) {
		if len(w) >= 5 { // "Run" or "Studio" alone are ordinary words
			add(w)
		}
	}
	for _, o := range d.Owners {
		add(o.Team)
		add(o.Channel)
	}
	for _, s := range []string{"orbit", "gems", "season pass", "ShopScreen", "OR-1", "FB-0", "Pixelforge", "starter pack", "level select", "colour blind mode", "team-", "cloudsave", "orbit_run"} {
		add(s)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := strings.ToLower(string(b))
		for s := range forbidden {
			if strings.Contains(src, s) {
				t.Errorf("%s contains %q from the sample dataset", f, s)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}

func TestOrbitRunGateCandidates(t *testing.T) {
	t.Parallel()
	d := loadOrbit(t)
	// The seed's gate cases: the double charge pauses as high, the lost
	// progress as critical. Here: the item whose report mentions being
	// charged twice and the one that lost all progress, found by content.
	for _, r := range triage.Run(d) {
		if r.Assessment == nil {
			continue
		}
		text := strings.ToLower(r.Item.Text)
		switch {
		case strings.Contains(text, "charged me twice"):
			if r.Assessment.Severity != "high" && r.Assessment.Severity != "critical" {
				t.Errorf("%s: double charge is %s", r.Item.ID, r.Assessment.Severity)
			}
		case strings.Contains(text, "lost all my progress"):
			if r.Assessment.Severity != "critical" {
				t.Errorf("%s: lost progress is %s", r.Item.ID, r.Assessment.Severity)
			}
		}
		b, _ := json.Marshal(r.Assessment.Evidence)
		if !strings.Contains(string(b), "days_to_code_freeze") {
			t.Errorf("%s: evidence lacks days to code freeze: %s", r.Item.ID, b)
		}
	}
}
