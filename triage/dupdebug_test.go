package triage_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// TestDupDebug prints every bug item's search hits for the dataset in
// $DUPDEBUG (a debugging aid; skipped otherwise). With DUPFILE=1 the
// tickets the run creates join the tracker, as the crew's eval files them.
func TestDupDebug(t *testing.T) {
	dir := os.Getenv("DUPDEBUG")
	if dir == "" {
		t.Skip("set DUPDEBUG to a dataset folder")
	}
	d, err := triage.LoadDataset(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	tickets := append([]triage.Ticket(nil), d.Tickets...)
	batch, itemTicket, known, n := triage.NewBatch(), map[string]string{}, map[string]bool{}, 0
	for _, it := range d.Items {
		p := triage.NewProject(triage.Dataset{Tickets: tickets, Crashes: d.Crashes, Owners: d.Owners, Releases: d.Releases})
		s := p.NewSession()
		s.Batch, s.ItemTicket = batch, itemTicket
		for id := range known {
			s.Known[id] = true
		}
		s.NewTicketID = func() string { n++; return fmt.Sprintf("FILED-%d", n) }
		r := s.Process(it)
		if os.Getenv("DUPFILE") != "" && r.Result.Outcome == triage.OutcomeNewTicket {
			known[r.Result.Ticket] = true
			tickets = append(tickets, triage.Ticket{ID: r.Result.Ticket, Title: r.Action.Title, Description: r.Action.Body, Status: "open",
				Severity: r.Result.Severity, Component: r.Result.Component, AffectedVersions: []string{r.Intake.AppVersion}})
		}
		exp := d.Expected[it.ID]
		fmt.Printf("%s cat=%s out=%s dup=%s ticket=%s | want %s %s %s\n", it.ID, r.Result.Category, r.Result.Outcome, r.Result.DuplicateOf, r.Result.Ticket, exp.Outcome, exp.DuplicateOf, exp.Component)
		for _, h := range append(r.TrackerHits, r.BatchHits...) {
			fmt.Printf("    %-14s %.3f %s [%s]\n", h.ID, h.Score, h.Resolves, strings.Join(h.Why, "; "))
		}
	}
}
