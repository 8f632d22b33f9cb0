package triage

import (
	"strings"
	"testing"
)

// A food delivery app: no dataset's product, written for these tests.
var deliveryOwners = []Owner{
	{Component: "orders", Team: "team-orders"},
	{Component: "rider-tracking", Team: "team-logistics"},
	{Component: "promo-codes", Team: "team-growth"},
	{Component: "sso", Team: "team-identity"},
	{Component: "ui", Team: "team-design"},
}

var deliveryTickets = []Ticket{
	{ID: "D-1", Component: "orders", Title: "Order stays pending after checkout", Description: "The order is placed but the status never leaves pending in the order list."},
	{ID: "D-2", Component: "orders", Title: "Reorder button adds items twice", Description: "Reordering a past order adds every item of the order twice to the basket."},
	{ID: "D-3", Component: "orders", Title: "Order history empty after update", Description: "The list of past orders is empty until the app is restarted."},
	{ID: "D-4", Component: "ui", Title: "Dark mode: order total unreadable", Description: "The total of the order is black on dark grey in dark mode."},
}

func TestComponentChooseGeneralises(t *testing.T) {
	t.Parallel()
	m := NewComponentModel(deliveryOwners, deliveryTickets)
	cases := []struct {
		text, want string
	}{
		// A component with no tickets wins on its name's words, even when
		// the product's main noun (order, in every ticket) is said too.
		{"The rider on the tracking map has not moved for 20 minutes although my order arrived.", "rider-tracking"},
		// ... and on what its name stands for, in another language.
		{"El código promocional no se aplica al pedido, el descuento no aparece.", "promo-codes"},
		// An acronym name reads as its words: single sign on is a login.
		{"I cannot sign in with my company account since this morning, the login page just reloads.", "sso"},
		// Learned vocabulary: words only the component's tickets use.
		{"My past orders list shows nothing, order history is empty.", "orders"},
		// Nothing points anywhere: the component with most tickets.
		{"zzz qqq", "orders"},
	}
	for _, c := range cases {
		got, why := m.Choose(c.text, nil, nil, nil)
		if got != c.want {
			t.Errorf("%q: %s (%s), want %s", c.text, got, why, c.want)
		}
	}
}

func TestComponentFallbackWithoutTickets(t *testing.T) {
	t.Parallel()
	m := NewComponentModel(deliveryOwners, nil)
	if got, why := m.Choose("zzz qqq", nil, nil, nil); got != deliveryOwners[0].Component || !strings.Contains(why, "first in CODEOWNERS") {
		t.Errorf("fallback %s (%s), want the first listed", got, why)
	}
}

func TestSeverityFromDistributionAndHarm(t *testing.T) {
	t.Parallel()
	rel := Releases{ActiveUsersByVersion: map[string]float64{"5.1.0": 60, "5.0.0": 30, "older": 10}}
	sig := func(name string, users int) CrashAggregate {
		return CrashAggregate{Signature: "SegFault:" + name, StackTop: name + ".run(" + name + ".kt:1)", Users: users, Events: users}
	}
	crashes := []CrashAggregate{sig("Top", 40), sig("Big", 12), sig("Mid", 9), sig("Few", 3), sig("Low", 2), sig("Rare", 1), sig("One", 1), sig("Two", 1)}
	cases := []struct {
		name, text string
		agg        *CrashAggregate
		version    string
		want       string // exact severity
		atLeast    string
	}{
		{name: "top signature", text: "The app crashes when I open the recipe list.", agg: &crashes[0], version: "5.0.0", want: "high"},
		{name: "below median", text: "The app crashes when I open the recipe list.", agg: &crashes[5], version: "5.0.0", want: "medium"},
		{name: "above median on most-used version", text: "The app crashes when I open the recipe list.", agg: &crashes[2], version: "5.1.0", want: "high"},
		{name: "above median on an old version", text: "The app crashes when I open the recipe list.", agg: &crashes[2], version: "5.0.0", want: "medium"},
		{name: "cosmetic", text: "The button label overlaps the icon on the settings screen.", want: "low"},
		{name: "data loss called minor", text: "Minor thing but all my notes are gone after the update.", want: "critical"},
		{name: "leak", text: "Small issue: the API key is leaked in plain text in the settings screen.", atLeast: "high"},
		{name: "lockout", text: "My account is locked out, nothing on the screen helps.", atLeast: "high"},
		{name: "cannot sign in", text: "Je ne peux pas me connecter, le bouton ne fait rien.", atLeast: "high"},
		{name: "wrong recipient", text: "The money went to the wrong account, the button said the other payee.", atLeast: "high"},
		{name: "unusable", text: "Since the theme change the app is unusable.", atLeast: "high"},
		// The harm the intake keeps a report for is harm here too.
		{name: "charged after cancelling", text: "I cancelled the yearly plan in March and was charged again in April.", atLeast: "high"},
		{name: "billed twice, called minor", text: "Minor thing, but it billed me twice for the same month.", atLeast: "high"},
		{name: "two debits", text: "Two payments of 12.99 left my account for one order.", atLeast: "high"},
		// A price shown wrong takes nothing: a discount counted twice.
		{name: "discount counted twice", text: "The WELCOME5 voucher is counted twice in the basket: a 40.00 jacket shows 30.00 instead of 35.00.", want: "medium"},
	}
	for _, c := range cases {
		ev := map[string]any{}
		got, reasons := severityOf(analyze(c.text).bag, c.text, c.agg, crashes, rel, c.version, ev)
		if c.want != "" && got != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, got, reasons, c.want)
		}
		if c.atLeast != "" && SeverityRank(got) < SeverityRank(c.atLeast) {
			t.Errorf("%s: %s (%v), want at least %s", c.name, got, reasons, c.atLeast)
		}
	}
}
