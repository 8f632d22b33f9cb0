package triage_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

func TestWriteClarifiesInTheReportersLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, lang, want string }{
		{"doesnt work anymore. fix it.", "en", "your device model"},
		{"La aplicación no funciona desde ayer.", "es", "el modelo de tu dispositivo"},
		{"Die App funktioniert nicht mehr.", "de", "dein Gerätemodell"},
		{"L'application ne marche plus.", "fr", "le modèle de votre appareil"},
		{"O aplicativo não funciona mais.", "pt", "o modelo do seu aparelho"},
		{"L'app non funziona più.", "it", "il modello del tuo dispositivo"},
		{"Приложение не работает", "en", "your device model"}, // no template: English
	} {
		in := triage.Classify(triage.Item{Text: tc.text})
		a := triage.Write(triage.WriteInput{Item: triage.Item{ID: "X-1", Text: tc.text}, Intake: in, Investigation: triage.Investigation{Verdict: triage.VerdictNeedsInfo}})
		if a.Kind != triage.ActionClarify || a.Language != tc.lang || !strings.Contains(a.Body, tc.want) {
			t.Errorf("%q: %+v, want a %s clarification containing %q", tc.text, a, tc.lang, tc.want)
		}
	}
	// Only what is missing is asked for.
	in := triage.Intake{Language: "en", Device: "Pixel 8", OS: "Android 15"}
	a := triage.Write(triage.WriteInput{Intake: in, Investigation: triage.Investigation{Verdict: triage.VerdictNeedsInfo}})
	if strings.Contains(a.Body, "device model") || !strings.Contains(a.Body, "app version") {
		t.Errorf("asks for the wrong things: %s", a.Body)
	}
}

func TestWriteCommentAndTicket(t *testing.T) {
	t.Parallel()
	it := triage.Item{ID: "X-7", Source: "play_store_review", ReceivedAt: "2026-05-01T10:00:00Z", Author: "sam",
		Text: "The app crashes when I export a note to PDF. Tap Share, pick PDF, it closes."}
	in := triage.Intake{Language: "en", Device: "Pixel 8", OS: "Android 15", AppVersion: "3.1.0", Steps: []string{"Tap Share, pick PDF, it closes."}}
	c := triage.Write(triage.WriteInput{Item: it, Intake: in, TicketID: "AB-9",
		Investigation: triage.Investigation{Verdict: triage.VerdictDuplicate, DuplicateOf: "batch:X-1", Resolved: "AB-9", Confidence: 0.9}})
	if c.Kind != triage.ActionComment || c.TicketID != "AB-9" {
		t.Fatalf("comment %+v", c)
	}
	for _, want := range []string{"+1", "X-7", "Pixel 8", "Android 15", "3.1.0", "export a note"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("comment lacks %q: %s", want, c.Body)
		}
	}
	as := &triage.Assessment{Severity: "medium", Component: "export", Owner: "team-x", Rationale: "medium: a crash. Telemetry: 12 events from 9 distinct users.", Evidence: map[string]any{"events": 12}}
	tk := triage.Write(triage.WriteInput{Item: it, Intake: in, Assessment: as,
		Investigation: triage.Investigation{Verdict: triage.VerdictNew, RegressionOf: "AB-2", Confidence: 0.8, Rationale: "no strong duplicate"}})
	if tk.Kind != triage.ActionCreateTicket || !strings.HasPrefix(tk.Title, "Regression of AB-2: Crash") || !strings.Contains(tk.Title, "3.1.0") {
		t.Fatalf("ticket title %q", tk.Title)
	}
	for _, want := range []string{"Pixel 8", "Steps", "Severity: medium", "export", "team-x", "12 events", "AB-2"} {
		if !strings.Contains(tk.Body, want) {
			t.Errorf("ticket body lacks %q: %s", want, tk.Body)
		}
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	itemTicket := map[string]string{"I-1": "NEW-1", "I-2": "NEW-1", "I-3": "AB-4"}
	for _, tc := range []struct {
		name string
		exp  triage.Expected
		got  triage.Result
		ok   bool
	}{
		{"dropped", triage.Expected{Category: "spam", Outcome: "dropped"}, triage.Result{Category: "spam", Outcome: "dropped"}, true},
		{"wrong category", triage.Expected{Category: "spam", Outcome: "dropped"}, triage.Result{Category: "praise", Outcome: "dropped"}, false},
		{"batch expectation met directly", triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-1"},
			triage.Result{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-1"}, true},
		{"batch expectation met through a chain", triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-1"},
			triage.Result{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-2"}, true},
		{"batch expectation met by the created ticket", triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-1"},
			triage.Result{Category: "bug", Outcome: "duplicate", DuplicateOf: "NEW-1"}, true},
		{"batch expectation, other ticket", triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-1"},
			triage.Result{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:I-3"}, false},
		{"ticket expectation", triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "AB-4"},
			triage.Result{Category: "bug", Outcome: "duplicate", DuplicateOf: "AB-4"}, true},
		{"component and severity", triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "billing", MinSeverity: "high"},
			triage.Result{Category: "bug", Outcome: "new_ticket", Component: "billing", Severity: "critical"}, true},
		{"severity too low", triage.Expected{Category: "bug", Outcome: "new_ticket", MinSeverity: "high"},
			triage.Result{Category: "bug", Outcome: "new_ticket", Severity: "medium"}, false},
		{"wrong component", triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "billing"},
			triage.Result{Category: "bug", Outcome: "new_ticket", Component: "shop"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok, why := triage.Score(tc.exp, tc.got, itemTicket)
			if ok != tc.ok {
				t.Fatalf("Score = %v (%v), want %v", ok, why, tc.ok)
			}
			if !ok && len(why) == 0 {
				t.Fatal("a failure without a reason")
			}
		})
	}
}
