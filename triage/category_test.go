package triage_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/triage"
)

// TestCategoryClasses holds the category decision on feedback written for
// this test about products of many kinds (food delivery, notes, a game,
// video streaming, a shop, a fitness tracker), one or more per class of
// phrasing that a first-rule-wins intake got wrong.
func TestCategoryClasses(t *testing.T) {
	t.Parallel()
	meta := triage.Metadata{Device: "Pixel 7", OS: "Android 14", AppVersion: "5.2.0"}
	for _, tc := range []struct {
		name   string
		text   string
		rating *float64
		meta   triage.Metadata
		want   string
	}{
		// Praise, also when it mentions a failure or a wish about the past.
		{"praise with a past wish", "Switched our whole family to this planner and I wish I had found it years ago. Reminders just work. 10/10.", rating(5), meta, "praise"},
		{"praise naming a failure it fixed", "My old player kept failing on long films, this one streams 4K without a hiccup. Great work!", rating(5), triage.Metadata{}, "praise"},
		{"praise with a found thing", "Really lovely redesign. Took a moment to find the filters, but I got there. Thanks team!", nil, meta, "praise"},
		{"one kind word in an account is no praise", "Used the self-checkout in store today, good experience. The receipt email never came though.", nil, meta, "bug"},
		{"a kind remark stays praise", "good app", nil, triage.Metadata{}, "praise"},
		{"dutch praise", "Geweldige app, goed gedaan! Bestellen gaat supersnel.", rating(5), triage.Metadata{}, "praise"},
		{"polish praise", "Świetna robota, aplikacja działa bez zarzutu. Dziękuję!", rating(5), triage.Metadata{}, "praise"},

		// Spam, also wrapped in praise, with contacts, crypto or a promo.
		{"praise then crypto", "Nice app, very clean!! I made €3,000 last month with a bitcoin trading bot, text me on WhatsApp +49 151 2345 6789 for details", rating(5), triage.Metadata{}, "spam"},
		{"earn per day", "Tired of your 9-5? Earn $400/day from your phone, passive income guaranteed. Join us on Telegram!", rating(5), triage.Metadata{}, "spam"},
		{"unrelated promotion", "Love the recipes! Also selling real followers for only $4.99, 20% off this week at fastfame-shop dot com", rating(5), triage.Metadata{}, "spam"},
		{"obfuscated link", "Free premium unlock at apkzone[.]ru, works on every phone", rating(5), triage.Metadata{}, "spam"},
		{"defanged scheme", "watch every new movie free hxxp://moviez-free.example", nil, triage.Metadata{}, "spam"},
		{"spanish money", "¡Gana dinero desde casa! Escríbeme y te explico, ingresos pasivos cada semana.", nil, triage.Metadata{}, "spam"},
		{"bug with an evidence link is not spam", "The basket total is wrong after removing an item, video: https://youtu.be/abc123", nil, meta, "bug"},
		{"bug naming an error code is not spam", "Payment fails with error code E4012 every time I pick the saved card.", nil, meta, "bug"},

		// Requests phrased as complaints.
		{"why can't I", "why can't I reorder my favourite meal with one tap?? have to build the basket again every friday. annoying", nil, meta, "feature_request"},
		{"there is no option", "Really annoying that there is no option to hide watched episodes from the home row.", rating(3), triage.Metadata{}, "feature_request"},
		{"italian why not", "Perché non posso esportare le note in Markdown? Sarebbe davvero comodo.", nil, triage.Metadata{}, "feature_request"},
		{"spanish no way", "No hay forma de cambiar la unidad a kilómetros, todo sale en millas. ¿Podrían añadir esa opción?", nil, meta, "feature_request"},
		{"german wish", "Es wäre wirklich praktisch, wenn man Trainings als Vorlage speichern könnte.", nil, triage.Metadata{}, "feature_request"},
		{"french intensified wish", "Ce serait vraiment utile de pouvoir filtrer les commandes par magasin.", nil, triage.Metadata{}, "feature_request"},
		{"dutch wish", "Het zou handig zijn als ik meerdere adressen kon opslaan.", nil, triage.Metadata{}, "feature_request"},
		{"polish wish", "Byłoby super, gdyby można było dodać tryb ciemny.", nil, triage.Metadata{}, "feature_request"},
		{"portuguese missing", "Por que não posso pausar a assinatura por um mês? Gostaria muito dessa opção.", nil, triage.Metadata{}, "feature_request"},

		// Bugs phrased as questions.
		{"is it just me", "Is it just me or does the map stop following the courier after a minute? It freezes on the last spot.", nil, meta, "bug"},
		{"why does", "Why does my streak reset to zero when I log a workout after midnight? It should count for the day I trained.", nil, meta, "bug"},
		{"shows the old value", "I changed my delivery address yesterday but checkout still shows the old one. Am I doing something wrong?", nil, meta, "bug"},
		{"instead of", "Tapping Download saves the episode in low quality instead of the HD I picked in settings?", nil, meta, "bug"},
		{"spanish expectation", "Debería avisarme cuando llega el pedido, pero la notificación nunca aparece. ¿A alguien más le pasa?", nil, meta, "bug"},
		{"french mismatch", "Le total du panier affiche 42 € mais on m'a prélevé 47 €. Pouvez-vous vérifier ?", nil, meta, "bug"},
		{"german stale", "Ich habe den Termin verschoben, aber die Erinnerung zeigt immer noch die alte Uhrzeit. Warum?", nil, meta, "bug"},
		{"declined payment", "Both of my cards were declined at checkout although they work everywhere else. What is going on?", nil, meta, "bug"},

		// Support questions, also when they name a feature or a limit.
		{"how do I with a feature name", "How do I move my saved playlists to the family plan? The sharing screen only lists my own account.", nil, meta, "support_question"},
		{"is there a setting", "Is there a setting so downloads only happen on wifi? My data plan is small.", nil, meta, "support_question"},
		{"procedure", "Do I have to cancel the trial before it ends, or does it stop by itself?", nil, triage.Metadata{}, "support_question"},
		{"dutch how", "Hoe kan ik mijn account verwijderen?", nil, triage.Metadata{}, "support_question"},
		{"polish how", "Jak mogę zmienić adres e-mail przypisany do konta?", nil, triage.Metadata{}, "support_question"},
		{"italian where", "Dove trovo le ricevute degli ordini passati?", nil, triage.Metadata{}, "support_question"},
		{"greyed out, plan question", "The export button is greyed out. Do I need the paid plan for that?", nil, meta, "support_question"},
		{"offline question", "Can I use the maps offline when I travel abroad?", nil, triage.Metadata{}, "support_question"},
		{"how to silence errors", "How do I turn off the error sounds during a run?", nil, meta, "support_question"},

		// More of each, across products.
		{"praise for a fix", "The new version fixed the crash I had on older tablets, and no more lag when scrolling. Love it!", rating(5), meta, "praise"},
		{"praise smooth and fast", "Smooth, fast and the new player looks beautiful.", rating(5), triage.Metadata{}, "praise"},
		{"channel spam", "Great game! Visit my channel for free coins", rating(5), triage.Metadata{}, "spam"},
		{"subtitles out of sync", "Subtitles are out of sync by two seconds on every episode since yesterday.", nil, meta, "bug"},
		{"regression in search", "Since the last update search is useless, it never finds anything I type.", rating(2), triage.Metadata{}, "bug"},
		{"cannot claim", "Can't claim the daily reward anymore", rating(2), triage.Metadata{}, "bug"},
		{"dutch bug", "Sinds de update blijft de app hangen bij het afrekenen.", nil, meta, "bug"},
		{"polish bug", "Aplikacja się zawiesza, kiedy otwieram koszyk. Nic się nie dzieje po kliknięciu.", nil, meta, "bug"},

		// A second batch, written before the rules above were tuned on it
		// (25/30 at first): stops by itself, how come, is this normal, a
		// yes/no can-I question, a seller with a social handle.
		{"batch2 01 bug", "Ever since version 3.1 the cart empties itself when I switch to another app and come back.", nil, meta, "bug"},
		{"batch2 02 bug", "Le minuteur s'arrête tout seul quand l'écran se verrouille. Normal ?", nil, meta, "bug"},
		{"batch2 03 bug", "Warum verschwinden meine Lesezeichen jedes Mal nach dem Neustart?", nil, meta, "bug"},
		{"batch2 04 bug", "La app me cobra el envío dos veces en cada pedido. ¿Es normal?", nil, meta, "bug"},
		{"batch2 05 bug", "O vídeo trava no mesmo ponto em todos os episódios, alguém mais?", nil, meta, "bug"},
		{"batch2 06 bug", "Il contapassi segna 0 passi anche dopo una camminata di un'ora. Come mai?", nil, meta, "bug"},
		{"batch2 07 bug", "De betaling blijft hangen op 'verwerken' en ik krijg geen bevestiging.", nil, meta, "bug"},
		{"batch2 08 bug", "Po ostatniej aktualizacji nie mogę się zalogować, wyskakuje błąd 500.", nil, meta, "bug"},
		{"batch2 09 bug", "Tracking says delivered but nothing arrived and the driver map still moves around town.", rating(2), meta, "bug"},
		{"batch2 10 bug", "pressing play just shows a spinning wheel forever, tried wifi and 5g", rating(1), triage.Metadata{}, "bug"},
		{"batch2 11 feature_request", "Would be cool to schedule orders in advance for lunch at work.", nil, triage.Metadata{}, "feature_request"},
		{"batch2 12 feature_request", "Honestly why is there still no way to split the bill with friends in 2026", rating(3), triage.Metadata{}, "feature_request"},
		{"batch2 13 feature_request", "Ich hätte gern eine Möglichkeit, Notizen mit Passwort zu schützen.", nil, triage.Metadata{}, "feature_request"},
		{"batch2 14 feature_request", "Seria ótimo ter legendas em mais idiomas nos documentários.", rating(5), triage.Metadata{}, "feature_request"},
		{"batch2 15 feature_request", "Il manque un mode hors ligne pour les cartes, ce serait top pour la randonnée.", rating(4), triage.Metadata{}, "feature_request"},
		{"batch2 16 feature_request", "Dodajcie proszę możliwość eksportu treningów do pliku GPX.", nil, triage.Metadata{}, "feature_request"},
		{"batch2 17 feature_request", "Kunnen jullie een widget toevoegen voor het startscherm?", nil, triage.Metadata{}, "feature_request"},
		{"batch2 18 feature_request", "Please let us pick the font size in the reader, the default is tiny on tablets.", rating(4), triage.Metadata{}, "feature_request"},
		{"batch2 19 support_question", "How can I change the card my subscription is billed to?", nil, triage.Metadata{}, "support_question"},
		{"batch2 20 support_question", "¿Dónde puedo ver el historial de mis pedidos anteriores?", nil, triage.Metadata{}, "support_question"},
		{"batch2 21 support_question", "Kann ich mein Abo pausieren, statt es zu kündigen?", nil, triage.Metadata{}, "support_question"},
		{"batch2 22 support_question", "What happens to my saved recipes if I cancel premium?", nil, triage.Metadata{}, "support_question"},
		{"batch2 23 support_question", "Is it possible to share one account between two phones?", nil, triage.Metadata{}, "support_question"},
		{"batch2 24 praise", "The coach feature changed my mornings, thank you so much!", rating(5), triage.Metadata{}, "praise"},
		{"batch2 25 praise", "Adoro questa app, la uso ogni giorno per le mie liste. Complimenti!", rating(5), triage.Metadata{}, "praise"},
		{"batch2 26 praise", "Super appli, livraison rapide et suivi clair. Bravo à l'équipe", rating(5), triage.Metadata{}, "praise"},
		{"batch2 27 spam", "Best notes app!!! btw I sell cheap Netflix accounts, DM me on Instagram @cheapstream_deals", rating(5), triage.Metadata{}, "spam"},
		{"batch2 28 spam", "Get unlimited lives and coins now at lifehax (dot) net no download needed", rating(5), triage.Metadata{}, "spam"},
		{"batch2 29 spam", "Hi I am Jessica, investment advisor, I can help you grow 10x with forex, contact me at +1 202 555 0143", nil, triage.Metadata{}, "spam"},
		{"batch2 30 spam", "Promo: buy 1 get 3 free on our vitamins, use code HEALTH50 at checkout on vitashop-deals.store", rating(4), triage.Metadata{}, "spam"},

		// A third batch (a shop and food delivery), written before tuning
		// (26/30 at first): would appreciate, a Dutch missing option, gift
		// card and adult-content pitches.
		{"batch3 01 bug", "Apple Pay sheet pops up then disappears and my order is stuck on pending payment.", nil, meta, "bug"},
		{"batch3 02 bug", "Why is my cart showing 3 items when I only added one?", nil, meta, "bug"},
		{"batch3 03 bug", "Checkout says my address is invalid, but it's the same one I used last month.", rating(2), meta, "bug"},
		{"batch3 04 bug", "The delivery tracker hasn't moved in 2 hours though the courier is already at my door.", nil, meta, "bug"},
		{"batch3 05 bug", "Il codice sconto viene accettato ma il totale non cambia.", nil, meta, "bug"},
		{"batch3 06 bug", "Am I the only one whose wishlist is empty after logging in on the tablet?", nil, triage.Metadata{}, "bug"},
		{"batch3 07 bug", "Nach dem Bezahlen lande ich wieder im Warenkorb und die Bestellung taucht nirgends auf.", nil, meta, "bug"},
		{"batch3 08 bug", "Quand je valide le panier, l'appli revient à l'accueil sans rien dire.", rating(1), meta, "bug"},
		{"batch3 09 bug", "Cada vez que pago con Apple Pay me sale 'Pago fallido' aunque el banco lo cobra.", rating(1), meta, "bug"},
		{"batch3 10 bug", "Search results are in random order even though I picked 'price: low to high'.", rating(3), meta, "bug"},
		{"batch3 11 feature_request", "It's so frustrating that I can't save more than one card. Please add that.", rating(3), triage.Metadata{}, "feature_request"},
		{"batch3 12 feature_request", "Why isn't there a dark theme yet?", rating(4), triage.Metadata{}, "feature_request"},
		{"batch3 13 feature_request", "Would really appreciate a way to reorder a past order in one tap.", rating(5), triage.Metadata{}, "feature_request"},
		{"batch3 14 feature_request", "Seria bueno poder elegir la hora de entrega exacta.", nil, triage.Metadata{}, "feature_request"},
		{"batch3 15 feature_request", "Gostaria que o app mostrasse o tempo estimado de entrega na lista de restaurantes.", rating(4), triage.Metadata{}, "feature_request"},
		{"batch3 16 feature_request", "Jammer dat er geen optie is om bestellingen te delen met huisgenoten, graag toevoegen!", rating(4), triage.Metadata{}, "feature_request"},
		{"batch3 17 support_question", "How do I add Apple Pay as a payment method at checkout?", nil, meta, "support_question"},
		{"batch3 18 support_question", "Can I change the delivery address after the order has been placed?", nil, triage.Metadata{}, "support_question"},
		{"batch3 19 support_question", "Wie lange dauert eine Rückerstattung normalerweise?", nil, triage.Metadata{}, "support_question"},
		{"batch3 20 support_question", "Comment puis-je annuler une commande déjà payée ?", nil, triage.Metadata{}, "support_question"},
		{"batch3 21 support_question", "Where do I find the invoice for my last order? I need it for my company.", nil, triage.Metadata{}, "support_question"},
		{"batch3 22 support_question", "Do you deliver to the islands, or only the mainland?", nil, triage.Metadata{}, "support_question"},
		{"batch3 23 praise", "Ordered at 9pm, arrived next morning, tracking was spot on. Brilliant service!", rating(5), triage.Metadata{}, "praise"},
		{"batch3 24 praise", "Muy buena app, rápida y fácil de usar. ¡Gracias!", rating(5), triage.Metadata{}, "praise"},
		{"batch3 25 praise", "Checkout with Apple Pay takes two taps, finally an app that gets it.", rating(5), meta, "praise"},
		{"batch3 26 spam", "Amazing shop app! Want designer bags at 90% off? Message me on WhatsApp and I'll send the catalogue", rating(5), triage.Metadata{}, "spam"},
		{"batch3 27 spam", "Get a $500 gift card now, just complete the form at giftz-claim.click", nil, triage.Metadata{}, "spam"},
		{"batch3 28 spam", "I earned 2 ETH last week staking with my mentor, contact him on telegram @cryptomentor_real", rating(5), triage.Metadata{}, "spam"},
		{"batch3 29 spam", "Visit our casino, 200 free spins for new players! www.spinwin-casino.bet", nil, triage.Metadata{}, "spam"},
		{"batch3 30 spam", "loving the app 😍 check my profile for exclusive pics 🔞", rating(5), triage.Metadata{}, "spam"},

		// A fourth batch, written before tuning (19/25 at first):
		// missing-option forms, why in Polish and "any idea why", policy
		// questions naming an error, money and channel pitches in German
		// and Italian.
		{"batch4 01 feature_request", "Great app, I just wish it had a sleep timer for podcasts.", rating(5), triage.Metadata{}, "feature_request"},
		{"batch4 02 feature_request", "Top App! Nur eine Bitte: könntet ihr einen Export als PDF einbauen?", rating(5), triage.Metadata{}, "feature_request"},
		{"batch4 03 feature_request", "Adoro o app, mas sinto falta de uma opção para silenciar as notificações à noite.", rating(4), triage.Metadata{}, "feature_request"},
		{"batch4 04 feature_request", "Brakuje mi możliwości ustawienia przypomnienia o wodzie.", rating(4), triage.Metadata{}, "feature_request"},
		{"batch4 05 bug", "Waarom krijg ik steeds een foutmelding bij het betalen met iDEAL?", nil, meta, "bug"},
		{"batch4 06 bug", "Czemu aplikacja wylogowuje mnie co kilka minut?", rating(2), meta, "bug"},
		{"batch4 07 bug", "Por que o app não mostra mais meus pedidos antigos? Sumiram todos.", rating(2), meta, "bug"},
		{"batch4 08 bug", "Any idea why the timer keeps resetting when my phone locks?", nil, meta, "bug"},
		{"batch4 09 bug", "The song skips to the next one by itself halfway through, happens on every album.", rating(3), meta, "bug"},
		{"batch4 10 bug", "My streak went from 120 days to 0 overnight even though I logged every day.", rating(1), meta, "bug"},
		{"batch4 11 support_question", "I get the error 'card not supported' — which cards do you accept?", nil, triage.Metadata{}, "support_question"},
		{"batch4 12 support_question", "Welche Zahlungsmethoden werden akzeptiert?", nil, triage.Metadata{}, "support_question"},
		{"batch4 13 support_question", "Quels sont les frais de livraison pour une commande de moins de 20 € ?", nil, triage.Metadata{}, "support_question"},
		{"batch4 14 support_question", "Is my data shared with third parties if I connect my smartwatch?", nil, triage.Metadata{}, "support_question"},
		{"batch4 15 support_question", "Qual è la differenza tra il piano base e quello premium?", nil, triage.Metadata{}, "support_question"},
		{"batch4 16 praise", "Eindelijk een app die gewoon doet wat hij belooft. Top!", rating(5), triage.Metadata{}, "praise"},
		{"batch4 17 praise", "Tolle App, benutze sie täglich, macht richtig Spaß.", rating(5), triage.Metadata{}, "praise"},
		{"batch4 18 praise", "Incroyable, la meilleure appli de recettes que j'ai testée.", rating(5), triage.Metadata{}, "praise"},
		{"batch4 19 praise", "Never thought a budgeting app could be fun. Well done!", rating(5), triage.Metadata{}, "praise"},
		{"batch4 20 spam", "Verdiene 500€ pro Tag von zu Hause aus! Schreib mir auf WhatsApp.", rating(5), triage.Metadata{}, "spam"},
		{"batch4 21 spam", "Gagnez de l'argent facilement avec notre plateforme de trading, inscrivez-vous sur profit-rapide[.]fr", rating(5), triage.Metadata{}, "spam"},
		{"batch4 22 spam", "App fantastica! Seguite il mio canale YouTube per trucchi e monete gratis", rating(5), triage.Metadata{}, "spam"},
		{"batch4 23 spam", "Cheap followers and likes, 1000 for $2, order at instafame.shop", nil, triage.Metadata{}, "spam"},
		{"batch4 24 bug", "After today's update I can't log in with Google anymore, it just loops back to the start.", rating(1), meta, "bug"},
		{"batch4 25 feature_request", "Can you please make the text bigger? It's hard to read on small phones.", rating(3), triage.Metadata{}, "feature_request"},

		// A fifth batch (a reader, a game, a recipe app, headphones, a
		// bank, a music player), written before tuning: a question whose
		// subject is a malfunction (can it be fixed, can I get it back,
		// tried five times), "no hay manera de que" as "it just won't", a
		// counter back to zero; a question whether something is broken
		// or needs a step first; plans and "would happily pay"; praise
		// with the user's own slip as an aside; a star rating given to
		// someone else inside a bug report.
		{"batch5 01 bug", "Meus marcadores ficaram todos bagunçados depois da atualização, o capítulo 3 aparece no fim. Dá para corrigir?", rating(3), meta, "bug"},
		{"batch5 02 bug", "No hay manera de que guarde la partida: llega al 100 %, se queda parado y al volver sigue en el nivel anterior. Lo he intentado cinco veces.", rating(2), meta, "bug"},
		{"batch5 03 bug", "hmm my reading streak went back to zero overnight?? 45 days gone. on the latest build. not cool", nil, triage.Metadata{AppVersion: "4.2.0"}, "bug"},
		{"batch5 04 bug", "Meine Serie von 90 Tagen ist nach dem Update verschwunden, jetzt steht da 1 Tag. Könnt ihr sie zurückholen?", rating(2), meta, "bug"},
		{"batch5 05 bug", "Ho provato tre volte ad aggiornare le cuffie: arriva quasi alla fine e poi ricomincia da capo. Non ci riesco.", rating(2), meta, "bug"},
		{"batch5 06 bug", "I rated my delivery driver 5 stars and the order page now shows 2 stars next to my comment 'super friendly, thank you!'. Happened twice now. Anyone else?", nil, meta, "bug"},
		{"batch5 07 bug", "Why is my recipe list all jumbled since yesterday? The favourites are mixed up with the ones I deleted. Can this be fixed?", nil, meta, "bug"},
		{"batch5 08 support_question", "The sleep chart has shown nothing for two nights since I set up the band. Is it broken or do I have to enable something first?", nil, meta, "support_question"},
		{"batch5 09 support_question", "Ist die automatische Sicherung kaputt oder muss ich sie erst einschalten?", nil, triage.Metadata{}, "support_question"},
		{"batch5 10 support_question", "How do I get the old list layout back? I prefer it to the new cards.", nil, triage.Metadata{}, "support_question"},
		{"batch5 11 feature_request", "Any plans for a landscape mode on tablets? I read in bed and would happily pay for premium for it.", nil, meta, "feature_request"},
		{"batch5 12 feature_request", "¿Hay planes de sacar una versión para la tele? La uso todos los días en el móvil.", nil, triage.Metadata{}, "feature_request"},
		{"batch5 13 feature_request", "Me encantaría poder ordenar las recetas por tiempo de preparación. ¡Gracias!", nil, meta, "feature_request"},
		{"batch5 14 feature_request", "Adoraria poder partilhar as listas de compras com a minha família.", nil, triage.Metadata{}, "feature_request"},
		{"batch5 15 feature_request", "Gibt es Pläne für eine Version auf der Uhr? Ich würde gerne dafür zahlen.", nil, triage.Metadata{}, "feature_request"},
		{"batch5 16 praise", "Ordered dinner for six and everything came hot. I was slow to find the tip button, but that was my fault, not the app. Five stars.", rating(5), meta, "praise"},
		{"batch5 17 praise", "Tolle App! Die Suche hat mich kurz verwirrt, aber das lag an mir. Weiter so.", rating(5), triage.Metadata{}, "praise"},
		{"batch5 18 support_question", "How do I export my workouts to a spreadsheet? I'd like to share them with my coach.", nil, meta, "support_question"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := triage.Classify(triage.Item{Text: tc.text, Rating: tc.rating, Metadata: tc.meta})
			if in.Category != tc.want {
				t.Fatalf("Classify(%q) = %s, want %s\ncues:\n  %s", tc.text, in.Category, tc.want, strings.Join(in.Cues, "\n  "))
			}
			if len(in.Cues) == 0 {
				t.Error("no cues")
			}
		})
	}
}

// TestStepsNeedAnObject: a sentence counts as a reproduction step when its
// action names what was acted on, so a vague complaint stays without steps
// (and is asked for details).
func TestStepsNeedAnObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text  string
		steps int
	}{
		{"Everything is sluggish and the icons do nothing when I tap them.", 0},
		{"Thinking about switching to another player, honestly.", 0},
		{"When I tap the heart icon on a song it vanishes.", 1},
		{"After switching accounts the basket is empty.", 1},
		{"Open Settings > Downloads, pick HD, tap Save.", 1},
		// A feature named by its verb is no action: nothing to reproduce.
		{"Upload is broken again. Photos missing too.", 0},
		{"The search doesn't find anything anymore.", 0},
		{"My download keeps stopping halfway.", 0},
		{"I uploaded three photos to the album and two vanished.", 1},
	} {
		if got := triage.ExtractSteps(tc.text); len(got) != tc.steps {
			t.Errorf("ExtractSteps(%q) = %q, want %d steps", tc.text, got, tc.steps)
		}
	}
}

// TestHarmIsNeverDropped: every category but bug is dropped without a
// person seeing it, so harm (a crash, lost data, money taken wrongly, an
// account locked or taken over, private data exposed) is a bug however it
// is phrased: a wish to fix it, a how-to question, praise around it. A
// price the user paid is no income offer and "check my screenshot" no
// pitch. Harm named only as what might happen leaves a request a request.
func TestHarmIsNeverDropped(t *testing.T) {
	t.Parallel()
	meta := triage.Metadata{Device: "Pixel 7", OS: "Android 14", AppVersion: "5.2.0"}
	checkCategories(t, meta, []categoryCase{
		{"paid price and a screenshot host", "Order total says $20/month but I was billed $40/month. Check my screenshot at ibb.co/xyz", nil, "bug"},
		{"any host called a recording", "Charged €9.99/month after I cancelled, screen recording here: files.example.com/r/12", nil, "bug"},
		{"wish to fix a crash", "It would be great if you could fix the crash on startup.", nil, "bug"},
		{"wish that crashing stops", "Would love it if the app stopped crashing when I open settings.", nil, "bug"},
		{"wish that losing stops", "I wish the app would stop losing my progress.", nil, "bug"},
		{"how-to after a double charge", "How do I get my money back? The app charged me twice for one order.", nil, "bug"},
		{"how-to after a takeover", "How can I recover my account? Someone changed my password and email and I am locked out.", nil, "bug"},
		{"praise around an exposure", "Great app! But since the update, my saved passwords are visible to anyone without unlocking. Thanks!", rating(5), "bug"},
		{"praise around destroyed data", "Love the app! Sadly it deleted all my photos. 10/10 otherwise, thank you, great work, keep it up, highly recommend!", rating(5), "bug"},
		{"spanish how-to after a lockout", "¿Cómo recupero mi cuenta? Cuenta bloqueada desde ayer y no puedo entrar.", nil, "bug"},
		{"two payments for one order, all else fine", "The parcel came on Friday, all good. My card now lists two payments of 18.90 for the one order though, please refund the extra one.", nil, "bug"},
		{"german two debits", "Lieferung war pünktlich, danke. Aber auf dem Konto sehe ich zwei Abbuchungen für dieselbe Bestellung.", nil, "bug"},
		{"cancelled then charged", "How do I get this stopped? I cancelled my plan in May and was still charged in June.", nil, "bug"},
		{"german cancelled then debited", "Ich habe im Mai gekündigt und trotzdem wurde im Juni wieder abgebucht.", nil, "bug"},
		{"charged twice in passing", "Nice app overall, it billed me twice this month.", nil, "bug"},
		// Not harm: a hypothetical, an improvised workaround, a plan price.
		{"wish to avoid a loss", "Would be nice to have cloud backup so I never lose my notes when I switch phones.", nil, "feature_request"},
		{"hacked together workaround", "Could you add a calendar export? We hacked something together with screenshots but it is clumsy.", nil, "feature_request"},
		{"cancel before a charge", "How do I cancel my trial so that I am not charged next month?", nil, "support_question"},
		{"plan price question", "Does the family plan cost $12/month for everyone or per person?", nil, "support_question"},
		{"income offer stays spam", "Earn $500/day from home, message me on WhatsApp", rating(5), "spam"},
	})
}

// TestHarmOutranksEverything: harm stated anywhere in a text puts it on
// the bug path, whatever frames it (praise, a wish, a how-to question, a
// pitch), for each class of harm in several languages: money that left
// but never arrived, payments or fees the user never made or agreed to,
// an account the user cannot get into, data the app deleted, someone
// else seeing the user's data. Written for this test about several kinds
// of product; harm only imagined, and a pitch that states no harm done
// to the writer, keep their category.
func TestHarmOutranksEverything(t *testing.T) {
	t.Parallel()
	checkCategories(t, triage.Metadata{}, []categoryCase{
		// Money sent, never received.
		{"praise around money not arriving", "Beautiful app, five stars! Just one thing: my transfer to my sister shows as sent but she never receives the money, twice now. Still love it.", rating(5), "bug"},
		{"spanish money not arriving", "Me encanta la app. Pero la transferencia a mi hermano nunca le llega, el dinero salió de mi cuenta.", nil, "bug"},
		{"dutch money not arriving", "Top app! Alleen: mijn overboeking is nooit aangekomen bij de ontvanger.", nil, "bug"},
		// Payments, charges and fees never made or agreed to.
		{"wish around payments not made", "It would be great to get an alert for new logins; this morning I found purchases I didn't make on my card.", nil, "bug"},
		{"spanish charges not made", "Sería genial tener alertas. Hoy vi cargos que no hice en mi tarjeta.", nil, "bug"},
		{"german debits not authorised", "Wäre schön, wenn es Benachrichtigungen gäbe. Ich sehe Abbuchungen, die ich nie autorisiert habe.", nil, "bug"},
		{"french payments not made", "Super appli. Mais je vois des paiements que je n'ai jamais effectués.", rating(5), "bug"},
		{"portuguese unrecognised charges", "Adoro o app! Mas apareceram cobranças que eu não fiz no cartão.", nil, "bug"},
		{"italian fee never accepted", "Ottima app, ma mi hanno preso una commissione che non ho mai accettato? Pagamenti che non ho fatto.", nil, "bug"},
		{"pitch beside a fee never agreed", "Nice app, follow me on instagram for deals. Also the app took 30 EUR from me for a fee I never agreed to.", nil, "bug"},
		// Locked out.
		{"request around a lockout", "Feature request: please stop signing me out after updates, I cannot get into my account at all since Monday.", nil, "bug"},
		{"portuguese lockout", "Seria ótimo ter login com biometria. Não consigo entrar na minha conta desde ontem.", nil, "bug"},
		{"italian lockout", "Sarebbe bello avere il tema scuro. Non riesco ad accedere al mio account da giorni.", nil, "bug"},
		// Data the app deleted.
		{"spanish how-to after deleted history", "¿Cómo puedo recuperar mis notas? La actualización borró todo el historial.", nil, "bug"},
		{"french app erased history", "Comment récupérer mes données ? L'application a effacé tout l'historique.", nil, "bug"},
		{"english app wiped everything", "Love the new look. But the sync wiped everything I had saved last week.", rating(4), "bug"},
		// Someone else sees the user's data.
		{"german someone else sees my statements", "Wie kann ich das ändern? Jemand anderes sieht meine Kontoauszüge auf seinem Handy.", nil, "bug"},
		{"english another user's account", "How do I report this? When I open my orders I see another customer's account with their address.", nil, "bug"},
		{"polish someone else sees my data", "Jak to zmienić? Ktoś inny widzi moje zamówienia w swojej aplikacji.", nil, "bug"},
		// Not harm: imagined, wished for, asked about, or a pitch.
		{"wish to see others' lists", "Would be nice if other people could see my playlists when I share them.", nil, "feature_request"},
		{"wish never to be locked out", "Please add a backup code so I never get locked out of my account.", nil, "feature_request"},
		{"how-to before a transfer", "How do I send money to a friend abroad?", nil, "support_question"},
		{"earn-money pitch with a link", "Earn $300/day from home with crypto signals, join now: www.profit-signals.xyz", rating(5), "spam"},
		{"pitch asking about a hack", "Was your account hacked? Recover it fast, message me on telegram: t.me/recoverpro", nil, "spam"},
	})
}

// TestRepeatedTextCountsOnce: a long text that repeats the same sentences
// is read as those sentences once, so a cue of one category pasted many
// times does not outweigh a different cue stated once.
func TestRepeatedTextCountsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		unit string
		want string
	}{
		{"¿hay manera de que no funcione? no hay manera de que la app funcione después de la actualización. ", "bug"},
		{"Great app, love it, thanks! The export button does nothing when I tap it. ", "bug"},
		{"How do I change my avatar? ", "support_question"},
	} {
		text := strings.Repeat(tc.unit, (32<<10)/len(tc.unit))
		if in := triage.Classify(triage.Item{Text: text}); in.Category != tc.want {
			t.Errorf("Classify(32 KB of %q) = %s, want %s\ncues:\n  %s", tc.unit, in.Category, tc.want, strings.Join(in.Cues, "\n  "))
		}
	}
}

// TestClassifyCost32K: a text at the store's report cap, made of the cues
// the patterns look for, is classified in bounded time.
func TestClassifyCost32K(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	for _, unit := range []string{" ", "but when I tap it should but then instead of ", "$1,000,000,000 per day earn 1 ", `'a "b 'c "d `} {
		text := strings.Repeat(unit, (32<<10)/len(unit))
		start := time.Now()
		triage.Classify(triage.Item{Text: text})
		// Generous for a loaded machine; measured 3-115 ms.
		if d := time.Since(start); d > 400*time.Millisecond {
			t.Errorf("Classify of 32 KB of %q took %v", unit, d)
		}
	}
}

// BenchmarkClassify32K classifies texts of the store's report cap (32 KB):
// plain filler and filler made of the cues the patterns look for.
func BenchmarkClassify32K(b *testing.B) {
	for _, tc := range []struct{ name, unit string }{
		{"spaces", " "},
		{"malfunction-cues", "but when I tap it should but then instead of "},
		{"money-cues", "$1,000,000,000 per day earn 1 "},
		{"quotes", `'a "b 'c "d `},
		{"report-and-log", "The app crashes when I open settings on my Pixel 7, version 5.2.0.\n" +
			"E/AndroidRuntime: FATAL EXCEPTION: main java.lang.NullPointerException at com.example.Settings.onCreate(Settings.java:42)\n"},
	} {
		text := strings.Repeat(tc.unit, (32<<10)/len(tc.unit))
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				triage.Classify(triage.Item{Text: text})
			}
		})
	}
}

// categoryCase is one text and the category it must get.
type categoryCase struct {
	name   string
	text   string
	rating *float64
	want   string
}

// checkCategories classifies each case's text (with meta as the form's
// metadata) and wants its category.
func checkCategories(t *testing.T, meta triage.Metadata, cases []categoryCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := triage.Classify(triage.Item{Text: tc.text, Rating: tc.rating, Metadata: meta})
			if in.Category != tc.want {
				t.Errorf("Classify(%q) = %s, want %s\ncues:\n  %s", tc.text, in.Category, tc.want, strings.Join(in.Cues, "\n  "))
			}
		})
	}
}
