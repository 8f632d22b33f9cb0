package triage_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/signoff-dev/signoff/triage"
)

// The datasets below are other products in the same layout as the sample:
// a bank and a note-taking app, with their own ticket ids, crash
// signatures, CODEOWNERS, teams and reports in English, German, French,
// Portuguese, Spanish and Italian. Nothing in the code knows them; they
// check that the decisions generalise.

// crashSpec generates crash log rows: n events of one signature, spread
// over the given (device, os) pairs, on one version.
type crashSpec struct {
	sig, stack, version string
	n                   int
	on                  [][2]string
	userPrefix          string
}

func crashCSV(start time.Time, specs ...crashSpec) string {
	var b strings.Builder
	b.WriteString("timestamp,app_version,device,os,signature,stack_top,user_id\r\n")
	k := 0
	for _, s := range specs {
		for i := range s.n {
			on := s.on[i%len(s.on)]
			ts := start.Add(time.Duration(k*97) * time.Minute).Format(time.RFC3339)
			fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s%03d\r\n", ts, s.version, on[0], on[1], s.sig, s.stack, s.userPrefix, i)
			k++
		}
	}
	return b.String()
}

type itemSpec struct {
	id, at, source string
	rating         float64 // 0: none
	device, os, v  string
	text           string
	exp            triage.Expected
}

func datasetFS(t *testing.T, tickets, releases, codeowners, crashes string, items []itemSpec) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{
		"tickets.json":  {Data: []byte(tickets)},
		"releases.json": {Data: []byte(releases)},
		"CODEOWNERS":    {Data: []byte(codeowners)},
		"crashes.csv":   {Data: []byte(crashes)},
	}
	exp := map[string]triage.Expected{}
	for _, it := range items {
		m := map[string]any{"device": nil, "os": nil, "app_version": nil}
		if it.device != "" {
			m["device"], m["os"], m["app_version"] = it.device, it.os, it.v
		}
		var rating any
		if it.rating > 0 {
			rating = it.rating
		}
		b, err := json.Marshal(map[string]any{"id": it.id, "source": it.source, "received_at": it.at, "author": "user-" + it.id,
			"rating": rating, "metadata": m, "text": it.text})
		if err != nil {
			t.Fatal(err)
		}
		fsys["inbox/"+it.id+".json"] = &fstest.MapFile{Data: b}
		exp[it.id] = it.exp
	}
	b, _ := json.Marshal(exp)
	fsys["expected.json"] = &fstest.MapFile{Data: b}
	return fsys
}

func bankDataset(t *testing.T) triage.Dataset {
	tickets := `[
 {"id":"KB-180","title":"Face ID login fails after iOS 17 update","status":"closed","severity":"high","component":"auth","affected_versions":["5.0.1","5.0.2"],"fixed_in":"5.0.3","owner":"team-identity","created":"2025-10-02","description":"Unlocking with Face ID shows 'Authentication failed' and falls back to the password prompt on iOS 17. Caused by a missing keychain access flag."},
 {"id":"KB-199","title":"Crash when opening the app on Android 9","status":"closed","severity":"high","component":"core","affected_versions":["4.9.0"],"fixed_in":"5.0.0","owner":"team-core","created":"2025-08-12","description":"App crashes at startup on Android 9 devices because of an unsupported font API."},
 {"id":"KB-210","title":"Push notifications for incoming payments not delivered on Android 14","status":"open","severity":"medium","component":"notifications","affected_versions":["5.1.0","5.2.0"],"fixed_in":null,"owner":"team-engagement","created":"2026-01-20","description":"Users on Android 14 stop receiving push notifications when money arrives. The messaging token is not refreshed after the app update. Seen on Pixel 8 and Galaxy S23."},
 {"id":"KB-230","title":"Monthly statement PDF is blank when downloaded","status":"open","severity":"low","component":"statements","affected_versions":["5.2.0"],"fixed_in":null,"owner":"team-accounts","created":"2026-02-25","description":"Downloading a monthly statement produces a PDF with empty pages. Rendering of the statement template fails silently."},
 {"id":"KB-241","title":"Card freeze toggle does not respond","status":"open","severity":"medium","component":"cards","affected_versions":["5.1.0"],"fixed_in":null,"owner":"team-cards","created":"2026-02-02","description":"Tapping the freeze card switch does nothing; the card stays active."},
 {"id":"KB-250","title":"Exchange rates shown with wrong decimal separator in German locale","status":"open","severity":"low","component":"ui","affected_versions":["5.2.0"],"fixed_in":null,"owner":"team-design","created":"2026-02-27","description":"With the phone language set to German, exchange rates use a dot instead of a comma as the decimal separator."}
]`
	releases := `{"product":"Kestrel Bank","company":"Kestrel Financial","current_version":"5.2.0",
 "releases":[{"version":"5.1.0","date":"2026-01-15","notes":"New card controls"},{"version":"5.2.0","date":"2026-03-01","notes":"Transfers redesign, payee migration"}],
 "next_release":{"version":"5.2.1","code_freeze":"2026-03-10","date":"2026-03-14"},
 "active_users_by_version":{"5.2.0":48,"5.1.0":40,"older":12}}`
	codeowners := `# component team channel
core           team-core        #bank-core
auth           team-identity    #bank-identity
accounts       team-accounts    #bank-accounts
transfers      team-payments    #bank-payments
payments       team-payments    #bank-payments
cards          team-cards       #bank-cards
notifications  team-engagement  #bank-engagement
statements     team-accounts    #bank-accounts
ui             team-design      #bank-design
`
	android := [][2]string{{"Pixel 9", "Android 15"}, {"Galaxy S24", "Android 14"}, {"Pixel 7", "Android 14"}, {"OnePlus 11", "Android 14"}, {"Galaxy A54", "Android 14"}}
	ios := [][2]string{{"iPhone 13", "iOS 17.2"}, {"iPhone 15", "iOS 17.4"}, {"iPad Pro", "iPadOS 17.3"}}
	crashes := crashCSV(time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC),
		crashSpec{"NPE:TransferConfirm.submit", "TransferConfirm.submit(TransferConfirm.kt:142) <- TransferConfirmFragment.onConfirmClicked(TransferConfirmFragment.kt:77)", "5.2.0", 22, android, "a"},
		crashSpec{"NPE:TransferConfirm.submit", "TransferConfirm.submit(TransferConfirm.swift:98) <- TransferConfirmController.confirmTapped(TransferConfirmController.swift:40)", "5.2.0", 9, ios, "i"},
		crashSpec{"MigrationError:payees_v7", "TransferRepository.migratePayees(TransferRepository.kt:88) <- AppStartup.run(AppStartup.kt:30)", "5.2.0", 6, android, "m"},
		crashSpec{"PaymentError:duplicate_submit", "BillPayService.submit(BillPayService.kt:210)", "5.2.0", 3, append(android[:2:2], ios[1]), "p"},
		crashSpec{"OOM:ChartRenderer", "ChartRenderer.drawHistory(ChartRenderer.kt:300)", "5.1.0", 4, android, "o"},
	)
	items := []itemSpec{
		{"K-01", "2026-03-02T09:00:00Z", "play_store_review", 1, "Pixel 9", "Android 15", "5.2.0",
			"Since yesterday's update the app crashes every time I confirm a transfer. I enter the amount, tap Confirm and it closes. Can't pay my rent!",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "transfers", MinSeverity: "high"}},
		{"K-02", "2026-03-02T10:30:00Z", "in_app_feedback", 0, "Galaxy S24", "Android 14", "5.2.0",
			"Die App stürzt jedes Mal ab, wenn ich eine Überweisung bestätigen will. Sehr ärgerlich.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:K-01"}},
		{"K-03", "2026-03-02T11:00:00Z", "support_email", 0, "", "", "",
			"Bonjour, depuis la mise à jour je ne reçois plus aucune notification quand je reçois un paiement. J'ai un Pixel 8 avec Android 14, version 5.2.0.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "KB-210"}},
		{"K-04", "2026-03-02T12:00:00Z", "app_store_review", 5, "iPhone 15", "iOS 17.4", "5.2.0",
			"Clean design and transfers are instant. Best banking app I've used!",
			triage.Expected{Category: "praise", Outcome: "dropped"}},
		{"K-05", "2026-03-02T12:30:00Z", "play_store_review", 5, "", "", "",
			"💰 Make $500 a day from home! Visit fast-cash-now[dot]biz and use code CASH500. 100% legit, no survey!",
			triage.Expected{Category: "spam", Outcome: "dropped"}},
		{"K-06", "2026-03-02T13:00:00Z", "play_store_review", 4, "Galaxy A54", "Android 14", "5.2.0",
			"Seria ótimo ter um modo escuro no aplicativo. Uso muito à noite.",
			triage.Expected{Category: "feature_request", Outcome: "dropped"}},
		{"K-07", "2026-03-02T14:00:00Z", "support_email", 0, "iPhone 13", "iOS 17.2", "5.2.0",
			"How do I change the phone number linked to my account? I got a new SIM card.",
			triage.Expected{Category: "support_question", Outcome: "dropped"}},
		{"K-08", "2026-03-02T15:00:00Z", "play_store_review", 1, "", "", "",
			"Terrible. Nothing works anymore.",
			triage.Expected{Category: "bug", Outcome: "needs_info"}},
		{"K-09", "2026-03-03T08:00:00Z", "app_store_review", 2, "iPhone 14", "iOS 17.5", "5.2.0",
			"Face ID stopped working again, it says authentication failed and asks for my password every single time.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "auth"}},
		{"K-10", "2026-03-03T09:00:00Z", "in_app_feedback", 0, "iPhone 13", "iOS 17.2", "5.2.0",
			"O aplicativo fecha sozinho quando confirmo uma transferência para um contato salvo.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:K-01"}},
		{"K-11", "2026-03-03T10:00:00Z", "support_email", 0, "OnePlus 11", "Android 14", "5.2.0",
			"After updating, all my saved payees disappeared and I have to add them again one by one. My transfer templates are gone too.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "transfers", MinSeverity: "critical"}},
		{"K-12", "2026-03-03T11:00:00Z", "support_email", 0, "iPhone 15", "iOS 17.4", "5.2.0",
			"I paid my electricity bill once but the amount was taken from my account twice. Please return the duplicate payment.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "payments", MinSeverity: "high"}},
		{"K-13", "2026-03-03T12:00:00Z", "discord", 0, "iPad Pro", "iPadOS 17.3", "5.2.0",
			"Transfer confirmation crashes the app on my iPad, tried three times.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:K-01"}},
		{"K-14", "2026-03-03T13:00:00Z", "play_store_review", 2, "Pixel 7", "Android 14", "5.2.0",
			"Downloaded my statment as PDF and every page is empty.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "KB-230"}},
		{"K-15", "2026-03-03T14:00:00Z", "in_app_feedback", 3, "Galaxy A54", "Android 14", "5.2.0",
			"Minor: exchange rates use a dot instead of a comma as decimal separator when my phone is set to German.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "KB-250"}},
	}
	d, err := triage.LoadDataset(datasetFS(t, tickets, releases, codeowners, crashes, items))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func notesDataset(t *testing.T) triage.Dataset {
	tickets := `[
 {"id":"QN-30","title":"Images in notes are displayed upside down","status":"closed","severity":"medium","component":"attachments","affected_versions":["2.8.0","2.9.0"],"fixed_in":"3.0.0","owner":"notes-media","created":"2025-11-03","description":"Photos taken in portrait mode appear rotated 180 degrees inside a note. EXIF orientation was ignored."},
 {"id":"QN-42","title":"Search does not find notes containing accented characters","status":"open","severity":"medium","component":"search","affected_versions":["3.0.2","3.1.0"],"fixed_in":null,"owner":"notes-find","created":"2026-01-10","description":"Searching for a word with an accent (é, ü, ñ) returns no results even when notes contain it. The index is not normalised."},
 {"id":"QN-51","title":"Reminder notifications arrive one hour late after daylight saving change","status":"open","severity":"low","component":"reminders","affected_versions":["3.1.0"],"fixed_in":null,"owner":"notes-core","created":"2026-03-30","description":"Reminders fire an hour late since the clock change."},
 {"id":"QN-55","title":"Login with Apple fails on iPad","status":"open","severity":"high","component":"accounts","affected_versions":["3.1.0"],"fixed_in":null,"owner":"notes-core","created":"2026-04-01","description":"Signing in with Apple on iPad shows an error and returns to the welcome screen."}
]`
	releases := `{"product":"Quillnote","company":"Quill Labs","current_version":"3.1.0",
 "releases":[{"version":"3.0.2","date":"2026-01-05","notes":"fixes"},{"version":"3.1.0","date":"2026-04-02","notes":"Tables, new sync engine"}],
 "next_release":{"version":"3.1.1","code_freeze":"2026-04-20","date":"2026-04-25"},
 "active_users_by_version":{"3.1.0":55,"3.0.2":35,"2.9.0":6,"older":4}}`
	codeowners := `core         notes-core
editor       notes-editor
sync         notes-sync
export       notes-media
attachments  notes-media
search       notes-find
reminders    notes-core
accounts     notes-core
`
	mixed := [][2]string{{"Pixel 8", "Android 14"}, {"Galaxy S23", "Android 14"}, {"iPhone 15", "iOS 17.4"}, {"iPad Air", "iPadOS 17.2"}}
	crashes := crashCSV(time.Date(2026, 4, 2, 6, 0, 0, 0, time.UTC),
		crashSpec{"SyncConflictError:server_newer", "SyncEngine.resolve(SyncEngine.kt:410) <- SyncEngine.pull(SyncEngine.kt:120)", "3.1.0", 9, mixed, "s"},
		crashSpec{"IndexOutOfBoundsException:TableLayout.measure", "TableLayout.measure(TableLayout.kt:120) <- EditorView.onPaste(EditorView.kt:900)", "3.1.0", 12, mixed, "e"},
	)
	items := []itemSpec{
		{"N-01", "2026-04-03T08:00:00Z", "app_store_review", 2, "iPhone 15", "iOS 17.4", "3.1.0",
			"Exporting a note to PDF gives me blank pages. Every export since 3.1.0.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "export"}},
		{"N-02", "2026-04-03T09:00:00Z", "play_store_review", 2, "Galaxy S23", "Android 14", "3.1.0",
			"Al exportar una nota a PDF, las páginas salen en blanco.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:N-01"}},
		{"N-03", "2026-04-03T10:00:00Z", "support_email", 0, "Pixel 8", "Android 14", "3.1.0",
			"Le note sincronizzate dal tablet sono sparite: ho perso due settimane di appunti!",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "sync", MinSeverity: "critical"}},
		{"N-04", "2026-04-03T11:00:00Z", "play_store_review", 1, "", "", "",
			"L'application ne marche plus.",
			triage.Expected{Category: "bug", Outcome: "needs_info"}},
		{"N-05", "2026-04-03T12:00:00Z", "in_app_feedback", 0, "iPhone 12", "iOS 16.7", "3.0.2",
			"Search can't find my notes when I type words with accents like café.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "QN-42"}},
		{"N-06", "2026-04-03T13:00:00Z", "play_store_review", 5, "", "", "",
			"Guadagna 1000€ al giorno!!! Clicca qui: bit[dot]ly/soldi-facili",
			triage.Expected{Category: "spam", Outcome: "dropped"}},
		{"N-07", "2026-04-03T14:00:00Z", "app_store_review", 5, "iPhone 15", "iOS 17.4", "3.1.0",
			"Beste Notiz-App, die ich je hatte. Die Synchronisierung funktioniert einwandfrei!",
			triage.Expected{Category: "praise", Outcome: "dropped"}},
		{"N-08", "2026-04-03T15:00:00Z", "in_app_feedback", 0, "Pixel 8", "Android 14", "3.1.0",
			"Me gustaría poder bloquear notas con contraseña.",
			triage.Expected{Category: "feature_request", Outcome: "dropped"}},
		{"N-09", "2026-04-03T16:00:00Z", "support_email", 0, "iPhone 13", "iOS 17.2", "3.1.0",
			"Como faço para recuperar uma nota que apaguei sem querer?",
			triage.Expected{Category: "support_question", Outcome: "dropped"}},
		{"N-10", "2026-04-04T08:00:00Z", "in_app_feedback", 0, "iPad Air", "iPadOS 17.2", "3.1.0",
			"Pasting a large table from a spreadsheet into a note makes the app crash.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "editor", MinSeverity: "medium"}},
		{"N-11", "2026-04-04T09:00:00Z", "play_store_review", 3, "Galaxy S21", "Android 13", "2.9.0",
			"Photos I add to a note show up upside down.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "QN-30"}},
		{"N-12", "2026-04-04T10:00:00Z", "discord", 0, "iPhone 14", "iOS 17.4", "3.1.0",
			"PDF export of a note: all pages white/blank on my iPhone too",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:N-01"}},
	}
	d, err := triage.LoadDataset(datasetFS(t, tickets, releases, codeowners, crashes, items))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func deliveryDataset(t *testing.T) triage.Dataset {
	tickets := `[
 {"id":"MD-470","title":"App crashes when adding a card in the wallet","status":"closed","severity":"high","component":"payments","affected_versions":["7.0.0","7.1.0"],"fixed_in":"7.2.0","owner":"pay-squad","created":"2026-01-10","description":"NullPointerException in CardForm.validate when the expiry field is empty."},
 {"id":"MD-488","title":"Push notification sound plays twice","status":"closed","severity":"low","component":"notifications","affected_versions":["7.1.0"],"fixed_in":"7.1.2","owner":"growth-squad","created":"2026-02-01","description":"Order status pushes play the sound two times."},
 {"id":"MD-501","title":"Order tracking map stays blank on iOS 18","status":"open","severity":"medium","component":"tracking","affected_versions":["7.2.0","7.3.0"],"fixed_in":null,"owner":"logistics-squad","created":"2026-03-02","description":"The live courier map shows a grey area instead of the map tiles. Reported on iPhone 14 and iPhone 16."},
 {"id":"MD-512","title":"Promo code applied twice reduces the total below zero","status":"open","severity":"high","component":"checkout","affected_versions":["7.3.0"],"fixed_in":null,"owner":"pay-squad","created":"2026-03-20","description":"Entering the same promo code two times stacks the discount; the order total becomes negative."},
 {"id":"MD-520","title":"Restaurant search ignores dietary filters","status":"open","severity":"medium","component":"search","affected_versions":["7.1.0","7.2.0","7.3.0"],"fixed_in":null,"owner":"discovery-squad","created":"2026-03-22","description":"Vegan and gluten-free filters are not applied to search results."},
 {"id":"MD-530","title":"Login with Apple loops back to the start screen","status":"open","severity":"high","component":"accounts","affected_versions":["7.3.0"],"fixed_in":null,"owner":"identity-squad","created":"2026-03-25","description":"After approving Sign in with Apple the app shows the start screen again. Log: ASAuthorizationError 1000."}
]`
	releases := `{"product":"Munchr","company":"Munchr GmbH","current_version":"7.3.0",
 "releases":[{"version":"7.2.0","date":"2026-02-20","notes":"Wallet"},{"version":"7.3.0","date":"2026-03-18","notes":"New checkout"}],
 "next_release":{"version":"7.3.1","code_freeze":"2026-04-02","date":"2026-04-06"},
 "active_users_by_version":{"7.3.0":52,"7.2.0":30,"7.1.0":12,"older":6}}`
	codeowners := `checkout       pay-squad        #pay
payments       pay-squad        #pay
tracking       logistics-squad  #logistics
search         discovery-squad  #discovery
menu           discovery-squad  #discovery
notifications  growth-squad     #growth
accounts       identity-squad   #identity
core           platform-squad   #platform
`
	android := [][2]string{{"Pixel 8", "Android 15"}, {"Galaxy A54", "Android 14"}, {"Pixel 7", "Android 14"}, {"Galaxy S22", "Android 14"}}
	ios := [][2]string{{"iPhone 15", "iOS 18.0"}, {"iPhone 16", "iOS 18.1"}}
	crashes := crashCSV(time.Date(2026, 3, 18, 6, 0, 0, 0, time.UTC),
		crashSpec{"IllegalStateException:CartViewModel.applyPromo", "CartViewModel.applyPromo(CartViewModel.kt:233) <- CheckoutFragment.onPlaceOrder(CheckoutFragment.kt:90)", "7.3.0", 18, android, "c"},
		crashSpec{"IllegalStateException:CartViewModel.applyPromo", "CartViewModel.applyPromo(CartViewModel.swift:120)", "7.3.0", 7, ios, "d"},
		crashSpec{"ASAuthorizationError:1000", "AppleSignIn.handle(AppleSignIn.swift:55)", "7.3.0", 6, ios, "a"},
		crashSpec{"NPE:CardForm.validate", "CardForm.validate(CardForm.kt:41)", "7.3.0", 5, android, "w"},
		crashSpec{"OOM:MenuImageCache", "MenuImageCache.decode(MenuImageCache.kt:77)", "7.3.0", 9, android, "o"},
	)
	items := []itemSpec{
		{"M-01", "2026-03-19T08:00:00Z", "play_store_review", 1, "Pixel 8", "Android 15", "7.3.0",
			"Tried to place my order and the app just closed on the checkout page. Happened 3 times, I gave up and ordered by phone.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "checkout", MinSeverity: "high"}},
		{"M-02", "2026-03-19T09:00:00Z", "in_app_feedback", 0, "Galaxy A54", "Android 14", "7.3.0",
			"La app se cierra cuando intento pagar el pedido con un código de descuento.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:M-01"}},
		{"M-03", "2026-03-19T10:00:00Z", "app_store_review", 2, "iPhone 16", "iOS 18.1", "7.3.0",
			"I can't follow my courier, the map is just grey.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "MD-501"}},
		{"M-04", "2026-03-19T11:00:00Z", "support_email", 0, "iPhone 15", "iOS 18.0", "7.3.0",
			"Impossible de me connecter avec Apple, ça me ramène toujours à l'écran de démarrage.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "MD-530"}},
		{"M-05", "2026-03-19T12:00:00Z", "app_store_review", 5, "iPhone 15", "iOS 18.0", "7.3.0",
			"Food arrived hot and fast, love the new design!",
			triage.Expected{Category: "praise", Outcome: "dropped"}},
		{"M-06", "2026-03-19T13:00:00Z", "play_store_review", 5, "", "", "",
			"Free food for a year!!! Go to gift-meals[dot]top and claim your voucher code FOOD2026",
			triage.Expected{Category: "spam", Outcome: "dropped"}},
		{"M-07", "2026-03-19T14:00:00Z", "in_app_feedback", 0, "Galaxy S22", "Android 14", "7.3.0",
			"Bitte fügt eine Möglichkeit hinzu, das Trinkgeld nachträglich zu ändern.",
			triage.Expected{Category: "feature_request", Outcome: "dropped"}},
		{"M-08", "2026-03-19T15:00:00Z", "support_email", 0, "iPhone 15", "iOS 18.0", "7.3.0",
			"Como faço para mudar o endereço de entrega padrão?",
			triage.Expected{Category: "support_question", Outcome: "dropped"}},
		{"M-09", "2026-03-19T16:00:00Z", "play_store_review", 1, "", "", "",
			"worst app ever, never works",
			triage.Expected{Category: "bug", Outcome: "needs_info"}},
		{"M-10", "2026-03-20T08:00:00Z", "play_store_review", 2, "Galaxy S22", "Android 14", "7.3.0",
			"Adding a new credit card in the wallet crashes the app again.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "payments"}},
		{"M-11", "2026-03-20T09:00:00Z", "in_app_feedback", 0, "Pixel 7", "Android 14", "7.3.0",
			"L'app si chiude quando applico un codice sconto al carrello.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:M-01"}},
		{"M-12", "2026-03-20T10:00:00Z", "app_store_review", 2, "iPhone 13", "iOS 17.5", "7.3.0",
			"I used my promo code once but the discount was applied two times and the total went negative.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "MD-512"}},
		{"M-13", "2026-03-20T11:00:00Z", "play_store_review", 2, "Pixel 6", "Android 14", "7.3.0",
			"Menu pictures take forever and then the app dies when I scroll a big restaurant menu.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "menu"}},
		{"M-14", "2026-03-20T12:00:00Z", "support_email", 0, "iPhone 15", "iOS 18.0", "7.3.0",
			"I was charged for an order that never arrived and nobody answers my emails.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "payments", MinSeverity: "high"}},
		{"M-15", "2026-03-20T13:00:00Z", "play_store_review", 2, "Galaxy S23", "Android 14", "7.3.0",
			"Seit dem Update filtert die Suche nicht mehr nach vegan.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "MD-520"}},
	}
	d, err := triage.LoadDataset(datasetFS(t, tickets, releases, codeowners, crashes, items))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func racingDataset(t *testing.T) triage.Dataset {
	tickets := `[
 {"id":"TD-31","title":"No sound after watching a rewarded ad","status":"closed","severity":"low","component":"audio","affected_versions":["1.6.0"],"fixed_in":"1.6.2","owner":"crew-engine","created":"2026-02-11","description":"When a rewarded video ad closes, engine and music audio stay muted until the race restarts."},
 {"id":"TD-40","title":"Bluetooth controller disconnects mid-race","status":"open","severity":"medium","component":"input","affected_versions":["1.7.0","1.8.0"],"fixed_in":null,"owner":"crew-engine","created":"2026-04-01","description":"Gamepads paired over Bluetooth drop the connection during a race; the car keeps accelerating. Seen on Android 13 and 14."},
 {"id":"TD-44","title":"Ghost lap times on the weekly leaderboard are wrong","status":"open","severity":"medium","component":"online","affected_versions":["1.8.0"],"fixed_in":null,"owner":"crew-online","created":"2026-04-20","description":"Lap times shown in the weekly ranking differ from the time recorded at the finish line."},
 {"id":"TD-47","title":"Daily challenge reward not granted","status":"open","severity":"medium","component":"economy","affected_versions":["1.8.0"],"fixed_in":null,"owner":"crew-online","created":"2026-04-25","description":"Completing the daily challenge does not add the coins."}
]`
	releases := `{"product":"Turbo Drift","company":"Slipstream Games","current_version":"1.8.0",
 "releases":[{"version":"1.7.0","date":"2026-03-10","notes":"Garage"},{"version":"1.8.0","date":"2026-04-15","notes":"Weekly events, new garage"}],
 "next_release":{"version":"1.8.1","code_freeze":"2026-05-05","date":"2026-05-10"},
 "active_users_by_version":{"1.8.0":58,"1.7.0":31,"older":11}}`
	codeowners := `engine   crew-engine
audio    crew-engine
input    crew-engine
garage   crew-meta
economy  crew-online
online   crew-online
store    crew-online
saves    crew-meta
`
	android := [][2]string{{"Galaxy S24", "Android 14"}, {"Pixel 8", "Android 15"}, {"Redmi Note 12", "Android 13"}}
	ios := [][2]string{{"iPhone 15", "iOS 17.5"}, {"iPhone 12", "iOS 17.4"}}
	crashes := crashCSV(time.Date(2026, 4, 15, 6, 0, 0, 0, time.UTC),
		crashSpec{"SIGSEGV:GarageScene.loadCarModel", "GarageScene.loadCarModel(GarageScene.cpp:512) <- GarageScene.onEnter(GarageScene.cpp:88)", "1.8.0", 30, append(android, ios...), "g"},
		crashSpec{"SaveMigrationError:v3_to_v4", "SaveStore.migrate(SaveStore.kt:77)", "1.8.0", 8, android, "s"},
		crashSpec{"StoreError:purchase_replayed", "PurchaseFlow.complete(PurchaseFlow.swift:143)", "1.8.0", 4, ios, "p"},
	)
	items := []itemSpec{
		{"R-01", "2026-04-16T08:00:00Z", "play_store_review", 1, "Galaxy S24", "Android 14", "1.8.0",
			"Every time I enter the garage to look at my cars the game crashes to the desktop of my phone. Started with 1.8.0.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "garage", MinSeverity: "high"}},
		{"R-02", "2026-04-16T09:00:00Z", "discord", 0, "iPhone 15", "iOS 17.5", "1.8.0",
			"garage = instant crash for me too lol",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:R-01"}},
		{"R-03", "2026-04-16T10:00:00Z", "play_store_review", 1, "Redmi Note 12", "Android 13", "1.8.0",
			"O jogo fecha sozinho quando abro a garagem.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:R-01"}},
		{"R-04", "2026-04-16T11:00:00Z", "in_app_feedback", 0, "Pixel 8", "Android 14", "1.8.0",
			"Il controller bluetooth si disconnette durante la gara e la macchina continua ad accelerare.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "TD-40"}},
		{"R-05", "2026-04-16T12:00:00Z", "app_store_review", 3, "iPhone 12", "iOS 17.4", "1.8.0",
			"After watching an ad for extra coins the sound is gone until I restart the race. Minor thing.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "audio"}},
		{"R-06", "2026-04-16T13:00:00Z", "play_store_review", 1, "", "", "",
			"Funktioniert nicht.",
			triage.Expected{Category: "bug", Outcome: "needs_info"}},
		{"R-07", "2026-04-16T14:00:00Z", "play_store_review", 2, "", "", "",
			"fps drops all the time now, unplayable",
			triage.Expected{Category: "bug", Outcome: "needs_info"}},
		{"R-08", "2026-04-16T15:00:00Z", "play_store_review", 5, "", "", "",
			"MONEDAS GRATIS ilimitadas en turbo-hacks[dot]net sin encuesta!!!",
			triage.Expected{Category: "spam", Outcome: "dropped"}},
		{"R-09", "2026-04-16T16:00:00Z", "app_store_review", 5, "iPhone 15", "iOS 17.5", "1.8.0",
			"Jeu génial, les graphismes sont superbes !",
			triage.Expected{Category: "praise", Outcome: "dropped"}},
		{"R-10", "2026-04-16T17:00:00Z", "in_app_feedback", 0, "Pixel 8", "Android 15", "1.8.0",
			"Please add a photo mode so I can take screenshots of my cars.",
			triage.Expected{Category: "feature_request", Outcome: "dropped"}},
		{"R-11", "2026-04-16T18:00:00Z", "support_email", 0, "iPhone 12", "iOS 17.4", "1.8.0",
			"Come posso ripristinare gli acquisti su un nuovo telefono?",
			triage.Expected{Category: "support_question", Outcome: "dropped"}},
		{"R-12", "2026-04-17T08:00:00Z", "play_store_review", 1, "Galaxy S24", "Android 14", "1.8.0",
			"After the update all my cars and upgrades disappeared, my save was reset to the first race!",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "saves", MinSeverity: "critical"}},
		{"R-13", "2026-04-17T09:00:00Z", "support_email", 0, "iPhone 15", "iOS 17.5", "1.8.0",
			"I bought the 1000 coins bundle and my card was charged two times for one purchase. Please refund.",
			triage.Expected{Category: "bug", Outcome: "new_ticket", Component: "store", MinSeverity: "high"}},
		{"R-14", "2026-04-17T10:00:00Z", "discord", 0, "Pixel 8", "Android 15", "1.8.0",
			"the weekly leaderboard shows wrong lap times, my 1:02 is listed as 1:09",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "TD-44"}},
		{"R-15", "2026-04-17T11:00:00Z", "play_store_review", 2, "Galaxy S24", "Android 14", "1.8.0",
			"Crashes in the garage since the update, can't tune my car anymore.",
			triage.Expected{Category: "bug", Outcome: "duplicate", DuplicateOf: "batch:R-01"}},
	}
	d, err := triage.LoadDataset(datasetFS(t, tickets, releases, codeowners, crashes, items))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGeneralisesToOtherProducts(t *testing.T) {
	t.Parallel()
	for name, load := range map[string]func(*testing.T) triage.Dataset{"bank": bankDataset, "notes": notesDataset, "delivery": deliveryDataset, "racing": racingDataset} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := load(t)
			runs := triage.Run(d)
			results := make([]triage.Result, len(runs))
			for i, r := range runs {
				results[i] = r.Result
				if len(r.Refusals) > 0 {
					t.Errorf("%s: guard refusals %v", r.Item.ID, r.Refusals)
				}
			}
			rows, score, total := triage.Evaluate(d, results)
			t.Logf("\n%s", triage.FormatTable(rows, score, total))
			for _, r := range rows {
				if !r.OK {
					t.Errorf("%s: %s", r.ItemID, strings.Join(r.Why, "; "))
				}
			}
		})
	}
}

// runFilingTickets is the pipeline as the server runs it: every ticket the
// writer files joins the tracker (title and body as description), so
// later reports search it, and the component model learns from it.
func runFilingTickets(d triage.Dataset) []triage.Result {
	runs := runsFiling(d)
	out := make([]triage.Result, len(runs))
	for i, r := range runs {
		out[i] = r.Result
	}
	return out
}

func TestGeneralisesWhenFiledTicketsJoinTheTracker(t *testing.T) {
	t.Parallel()
	sets := map[string]func(*testing.T) triage.Dataset{"bank": bankDataset, "notes": notesDataset, "delivery": deliveryDataset, "racing": racingDataset}
	for name, load := range sets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := load(t)
			rows, score, total := triage.Evaluate(d, runFilingTickets(d))
			t.Logf("\n%s", triage.FormatTable(rows, score, total))
			for _, r := range rows {
				if !r.OK {
					t.Errorf("%s: %s", r.ItemID, strings.Join(r.Why, "; "))
				}
			}
		})
	}
	t.Run("sample", func(t *testing.T) {
		t.Parallel()
		d, ok := tryOrbit()
		if !ok {
			t.Skip("sample dataset not found")
		}
		rows, score, total := triage.Evaluate(d, runFilingTickets(d))
		if score != total {
			t.Errorf("\n%s", triage.FormatTable(rows, score, total))
		}
	})
}
