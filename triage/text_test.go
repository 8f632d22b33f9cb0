package triage

import (
	"reflect"
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	var got []string
	for _, tk := range tokenize("Doesn't work on 2.4.1 — l'app se cierra, score -2,094,332,110; Stürzt AB!") {
		s := tk.s
		if tk.neg {
			s = "-" + s
		}
		got = append(got, s)
	}
	want := []string{"doesnt", "work", "on", "2.4.1", "l", "app", "se", "cierra", "score", "-2,094,332,110", "sturzt", "ab"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tokenize = %q, want %q", got, want)
	}
}

func TestSplitIdent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"HttpClientTimeoutException:5":       {"http", "client", "timeout", "exception", "5"},
		"NPE:CheckoutView.renderTotal":       {"npe", "checkout", "view", "render", "total"},
		"BillingError:duplicate_transaction": {"billing", "error", "duplicate", "transaction"},
		"onSignInResult(AuthManager.kt:142)": {"on", "sign", "in", "result", "auth", "manager", "kt", "142"},
		"HTTPServer2Start":                   {"http", "server", "2", "start"},
	} {
		if got := splitIdent(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitIdent(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConceptsMeetAcrossLanguages checks the lexicon's point: the same
// problem in six languages reads as the same concepts.
func TestConceptsMeetAcrossLanguages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		want  []string
		texts []string
	}{
		{[]string{"~crash", "~login"}, []string{
			"The app crashes when I sign in",
			"La app se cierra al iniciar sesión",
			"Die App stürzt beim Anmelden ab",
			"L'application plante à la connexion",
			"O app fecha sozinho ao fazer login",
			"L'app si chiude durante l'accesso",
		}},
		{[]string{"~data_loss", "~progress"}, []string{
			"I lost all my progress",
			"Perdí todo mi progreso",
			"Mein ganzer Fortschritt ist verloren",
			"J'ai perdu toute ma progression",
			"Perdi todo o meu progresso",
			"Ho perso tutti i miei progressi",
		}},
		{[]string{"~charge", "~duplicate"}, []string{
			"I was charged twice",
			"Me cobraron dos veces",
			"Mir wurde zweimal abgebucht",
			"J'ai été débité deux fois",
			"Fui cobrado duas vezes",
			"Mi è stato addebitato due volte",
		}},
	} {
		for _, text := range tc.texts {
			bag := analyze(text).bag
			for _, c := range tc.want {
				if bag[c] == 0 {
					t.Errorf("%q lacks %s: %v", text, c, analyze(text).seq)
				}
			}
		}
	}
}

func TestLexiconDetails(t *testing.T) {
	t.Parallel()
	has := func(text, c string) bool { return analyze(text).bag[c] > 0 }
	for _, tc := range []struct {
		text, concept string
		want          bool
	}{
		{"an incoming phone call", "~call", true},
		{"a blank screen", "~blank_screen", true},
		{"a blank screen", "~blank", false},            // the longer phrase wins
		{"my statment is missing", "~statement", true}, // a typo within one edit
		{"le pagine sono vuote", "~blank", true},       // Romance endings
		{"paid with my credit card", "~card", true},    // a form under two concepts
		{"paid with my credit card", "~charge", true},
		{"the total shows -12.50", "~negative", true},
		{"I had about 2.2 billion", "~negative", false},
		{"quiero bloquear notas", "~freeze", false}, // two edits away from a freeze word
	} {
		if got := has(tc.text, tc.concept); got != tc.want {
			t.Errorf("%q has %s = %v, want %v (%v)", tc.text, tc.concept, got, tc.want, analyze(tc.text).seq)
		}
	}
	for name, want := range map[string][]string{
		"billing":          {"~charge"},
		"payments":         {"~charge"},
		"photosync":        {"~camera", "~sync"},
		"in-app-purchases": {"~purchase"},
		"notifications":    {"~notification"},
		"core":             nil,
	} {
		if got := conceptsOfName(name); !reflect.DeepEqual(got, want) {
			t.Errorf("conceptsOfName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{{"statment", "statement", 1}, {"crahs", "crash", 1}, {"bloquear", "bloque", 2}, {"abc", "abc", 0}, {"", "ab", 2}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSentences(t *testing.T) {
	t.Parallel()
	got := sentences("Updated to 2.4.1 yesterday. It crashes!! Why?\nSecond line; third part")
	want := []string{"Updated to 2.4.1 yesterday.", "It crashes!!", "Why?", "Second line;", "third part"}
	if !slices.Equal(got, want) {
		t.Fatalf("sentences = %q, want %q", got, want)
	}
}
