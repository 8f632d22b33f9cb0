package triage

import "testing"

// Harm is a floor: calling a report minor, cosmetic, low priority or not
// urgent (in any language) never rates exposure, lost or overwritten data,
// lockout or money sent wrongly below its harm. Written for a note-taking
// app, a food delivery app and a video service, none of the datasets.
func TestSeverityHarmIsAFloor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text, atLeast string
	}{
		{"exposure to other users, called cosmetic", "Cosmetic issue, low priority: the team page shows every member's API tokens to guests who were only invited to one board.", "high"},
		{"private data to other customers", "Not urgent: the order screen displays other customers' phone numbers and home address to any courier.", "high"},
		{"exposure in Spanish, sin prisa", "Sin prisa, algo menor: la lista muestra los datos personales de otros usuarios a cualquiera.", "high"},
		{"exposure in German, nicht dringend", "Nicht dringend: andere Nutzer sehen mein Passwort in der Profilansicht angezeigt.", "high"},
		{"overwritten notes", "Minor thing: after sync yesterday's notes are overwritten by today's.", "critical"},
		{"corrupted files in French", "Pas urgent : après la synchronisation mes fichiers sont corrompus.", "critical"},
		{"overwritten in Dutch", "Geen haast, maar mijn notities worden overschreven na het synchroniseren.", "critical"},
		{"amount multiplied and sent", "Tiny issue, no rush: the tip amount is multiplied by 10 when I pay, so the payment went out ten times larger.", "high"},
		{"amount turned into another", "Low priority: I entered 5.50 for the transfer and it turned into 550.00 on confirm; the money was sent as 550.00 instead of 5.50.", "high"},
		{"lockout called minor", "Minor: my account is locked out since this morning.", "high"},
	}
	for _, c := range cases {
		got, reasons := severityOf(analyze(c.text).bag, c.text, nil, nil, Releases{}, "", map[string]any{})
		if SeverityRank(got) < SeverityRank(c.atLeast) {
			t.Errorf("%s: %s (%v), want at least %s", c.name, got, reasons, c.atLeast)
		}
	}
}

// The cosmetic rule (low) never applies when a harm or exposure word is
// said, and calming words still lower a report with no harm at all.
func TestSeverityCosmeticNeedsNoHarm(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text, want string
		notLow           bool
	}{
		{name: "plain cosmetic", text: "The button label overlaps the icon on the settings screen.", want: "low"},
		{name: "low priority broken feature", text: "Low priority: dragging a bookmark into a folder does not work.", want: "low"},
		{name: "leak word on a screen", text: "The settings screen layout shows a privacy leak warning in the wrong colour.", notLow: true},
		{name: "missing data on a screen", text: "Not urgent, the button on my saved notes screen: all my notes are gone.", notLow: true},
		{name: "wrong price on display", text: "Cosmetic: the price display shows the wrong amount on the checkout button.", notLow: true},
	}
	for _, c := range cases {
		got, reasons := severityOf(analyze(c.text).bag, c.text, nil, nil, Releases{}, "", map[string]any{})
		if c.want != "" && got != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, got, reasons, c.want)
		}
		if c.notLow && got == "low" {
			t.Errorf("%s: rated low (%v) with a harm word", c.name, reasons)
		}
	}
}
