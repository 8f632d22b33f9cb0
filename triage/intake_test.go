package triage_test

import (
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

func rating(r float64) *float64 { return &r }

func TestClassifyCategories(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		text   string
		rating *float64
		want   string
	}{
		{"crash", "The app crashes when I open my profile.", nil, "bug"},
		{"problem words beat a high rating", "Love this app but it keeps crashing on startup.", rating(5), "bug"},
		{"closes by itself", "Whenever I press the upload button the app closes.", nil, "bug"},
		{"spanish crash", "La aplicación se cierra cuando abro la cámara.", nil, "bug"},
		{"german crash", "Die App stürzt beim Start ab.", nil, "bug"},
		{"french crash", "L'appli plante quand j'ouvre mes messages.", nil, "bug"},
		{"portuguese crash", "O app fecha sozinho quando abro o chat.", nil, "bug"},
		{"italian crash", "L'app si chiude quando apro le impostazioni.", nil, "bug"},
		{"data loss", "All my saved notes are gone after the update!", nil, "bug"},
		{"double charge", "I was charged twice for my subscription this month.", nil, "bug"},
		{"negative number", "My balance shows -4,294,967,200 which cannot be right", nil, "bug"},
		{"lag", "Scrolling is really laggy and choppy lately.", rating(2), "bug"},
		{"doesn't work", "doesnt work anymore. fix it.", rating(1), "bug"},
		{"never comes back", "After a video call the sound never comes back.", rating(3), "bug"},
		{"vague complaint with a low rating", "Worst update ever.", rating(1), "bug"},
		{"feature despite a weak problem word", "Would love a dark mode, the bright background hurts my eyes and I keep failing to read at night. Great app otherwise.", nil, "feature_request"},
		{"please add", "Please add an option to export to CSV.", nil, "feature_request"},
		{"german feature", "Es wäre schön, wenn man Notizen farbig markieren könnte.", nil, "feature_request"},
		{"french feature", "Ce serait bien d'avoir un widget pour l'écran d'accueil.", nil, "feature_request"},
		{"italian feature", "Sarebbe bello poter condividere le liste.", nil, "feature_request"},
		{"how do I", "How do I restore my purchases on a new phone?", nil, "support_question"},
		{"spanish how", "¿Cómo puedo cambiar mi correo electrónico?", nil, "support_question"},
		{"german how", "Wie kann ich mein Abo kündigen?", nil, "support_question"},
		{"praise", "Best app ever!!! Five stars ⭐⭐⭐⭐⭐", rating(5), "praise"},
		{"portuguese praise", "Adoro este aplicativo, muito bom!", rating(5), "praise"},
		{"rating alone", "Thanks for the update.", rating(5), "praise"},
		{"spam with obfuscated link", "GET 5000 FREE COINS!!! go to free-coins[dot]xyz and enter code WIN500 no survey", rating(5), "spam"},
		{"spam with link and promo", "Earn $300 a day from home, click here: http://cash.example.top use code CASH", nil, "spam"},
		{"bug with a screenshot link is not spam", "Crash on checkout, screenshot: https://imgur.com/abc.png", nil, "bug"},
		{"display bug question is still a bug", "my score shows as -2,000,000,123. is this a display bug or did I lose it?", nil, "bug"},
		{"charged without delivery", "I was charged but never got my coins.", nil, "bug"},
		{"nothing happens", "When I tap Save nothing happens.", nil, "bug"},
		{"spanish vague", "No me funciona", rating(1), "bug"},
		{"short request", "Dark mode please!!", rating(4), "feature_request"},
		{"german request", "Bitte einen Dunkelmodus einbauen.", nil, "feature_request"},
		{"it'd be great", "It'd be great to have an offline mode.", nil, "feature_request"},
		{"refund question", "Can I get a refund for my subscription? I don't use it anymore.", nil, "support_question"},
		{"french how", "Comment puis-je changer mon mot de passe ?", nil, "support_question"},
		{"prize spam", "Win an iPhone 16! Click here: www.prize-now.top", nil, "spam"},
		{"help alone is not a feature", "Help please!!", rating(1), "bug"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := triage.Classify(triage.Item{Text: tc.text, Rating: tc.rating})
			if in.Category != tc.want {
				t.Fatalf("Classify(%q) = %s, want %s (cues %v)", tc.text, in.Category, tc.want, in.Cues)
			}
			if in.Confidence <= 0 || in.Confidence > 1 {
				t.Errorf("confidence %v", in.Confidence)
			}
			if len(in.Cues) == 0 {
				t.Error("no cues")
			}
		})
	}
}

func TestClassifyExtractsFacts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		item            triage.Item
		device, os, ver string
		lang            string
		steps           int
	}{
		{"metadata wins", triage.Item{Text: "crashes on my iPhone 12 with 1.0.0", Metadata: triage.Metadata{Device: "Pixel 8", OS: "Android 15", AppVersion: "2.4.1"}},
			"Pixel 8", "Android 15", "2.4.1", "en", 0},
		{"text fills the gaps", triage.Item{Text: "Crashes since I updated to 3.2.1 on my Galaxy S23 with Android 14. Tap Export, pick PDF, it closes."},
			"Galaxy S23", "Android 14", "3.2.1", "en", 1},
		{"an OS version is not the app version", triage.Item{Text: "iPhone 15, iOS 18.1.1, the login button does nothing"},
			"iPhone 15", "iOS 18.1.1", "", "en", 0},
		{"a date is not a version", triage.Item{Text: "Seit dem 14.09.2026 stürzt die App ab, wenn ich auf Senden tippe."},
			"", "", "", "de", 1},
		{"spanish steps", triage.Item{Text: "El juego se cierra cuando intento iniciar sesión. Elijo mi cuenta y vuelve al inicio."},
			"", "", "", "es", 2},
		{"french", triage.Item{Text: "Bonjour, depuis la mise à jour je ne reçois plus les notifications sur mon Pixel 7."},
			"Pixel 7", "", "", "fr", 0},
		{"portuguese", triage.Item{Text: "O aplicativo não abre mais no meu celular desde ontem, versão 4.1.0."},
			"", "", "4.1.0", "pt", 0},
		{"italian", triage.Item{Text: "Quando apro una nota l'app si chiude, ho un OnePlus 11."},
			"OnePlus 11", "", "", "it", 1},
		{"nothing to extract", triage.Item{Text: "game lags a lot lately, really choppy. used to be smooth."},
			"", "", "", "en", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := triage.Classify(tc.item)
			if in.Device != tc.device || in.OS != tc.os || in.AppVersion != tc.ver || in.Language != tc.lang || len(in.Steps) != tc.steps {
				t.Fatalf("got device=%q os=%q version=%q lang=%q steps=%q, want %q %q %q %q %d steps",
					in.Device, in.OS, in.AppVersion, in.Language, in.Steps, tc.device, tc.os, tc.ver, tc.lang, tc.steps)
			}
		})
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"The app closes when I open the camera.", "en"},
		{"La aplicación se cierra cuando abro la cámara.", "es"},
		{"Die App stürzt ab, wenn ich die Kamera öffne.", "de"},
		{"L'application se ferme quand j'ouvre la caméra.", "fr"},
		{"O aplicativo fecha quando eu abro a câmera.", "pt"},
		{"L'app si chiude quando apro la fotocamera.", "it"},
		{"アプリが起動しません", "ja"},
		{"Приложение вылетает при запуске", "ru"},
		{"", "en"},
	} {
		if got := triage.Language(tc.text); got != tc.want {
			t.Errorf("Language(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2.4.1", "2.4.1", 0},
		{"2.4", "2.4.0", 0},
		{"v2.4", "2.4.0", 0},
		{"2.10", "2.9", 1},
		{"2.3.9", "2.4.0", -1},
		{"2.4.1", "2.3.5", 1},
		{"10.0", "9.9.9", 1},
		{"2.5.0-beta.1", "2.5.0", -1},
		{"2.5.0-beta.2", "2.5.0-beta.10", -1},
		{"2.5.0-alpha", "2.5.0-beta", -1},
		{"2.5.0+build7", "2.5.0", 0},
		{"Version 3.1", "3.1.0", 0},
		{"unknown", "1.0", -1},
	} {
		if got := triage.CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := triage.CompareVersions(tc.b, tc.a); got != -tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestExtractSteps(t *testing.T) {
	t.Parallel()
	got := triage.ExtractSteps("Steps:\n1. Open the app\n2. Go to Settings > Backup\n3. Press Restore\nIt crashes. Was fine on 2.4.1. Please help")
	want := []string{"Open the app", "Go to Settings > Backup", "Press Restore"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(s string) bool { return s == w || s == "1. "+w || s == "2. "+w || s == "3. "+w }) {
			t.Errorf("steps %q lack %q", got, w)
		}
	}
}
