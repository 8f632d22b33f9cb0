package triage

import (
	"regexp"
	"strings"
)

// More harm evidence, in the eight languages intake reads. Harm decides
// the category before anything else the text says (a wish, a how-to
// question, praise, even a pitch), so each form states harm done, in the
// first person or to the user's things, never a harm that might happen.

var (
	// Money taken for something the user did not do or agree to:
	// "payments I didn't make", "unrecognised charges", "a fee I never
	// agreed to".
	reUnrecognisedCharge = regexp.MustCompile(`(?i)\b(?:payments?|charges?|transactions?|purchases?|transfers?|debits?|withdrawals?|fees?|subscriptions?)\s+(?:that\s+)?(?:i|we)\s+(?:did\s+not|didn'?t|never|don'?t|do\s+not|have\s+not|haven'?t|had\s+not)\s+(?:\w+\s+)?(?:make|made|authori[sz]e|authori[sz]ed|recogni[sz]e|order|ordered|approve|approved|agree\s+to|agreed\s+to|sign\s+up\s+for|signed\s+up\s+for|ask\s+for|asked\s+for|consent\s+to|consented\s+to)\b|\b(?:unrecogni[sz]ed|unauthori[sz]ed|unknown|fraudulent)\s+(?:card\s+)?(?:payments?|charges?|transactions?|purchases?|transfers?|debits?|withdrawals?)\b|` +
		`\b(?:pagos?|cargos?|cobros?|movimientos?|transferencias?|compras?|comisi[óo]n|comisiones|suscripci[óo]n)\s+que\s+(?:yo\s+)?(?:no|nunca)\s+(?:\w+\s+)?(?:hice|he\s+hecho|realic[ée]|he\s+realizado|reconozco|autoric[ée]|he\s+autorizado|ped[ií]|acept[ée]|he\s+aceptado)\b|\b(?:cargos?|cobros?|pagos?|movimientos?)\s+(?:no\s+autorizad|desconocid|fraudulent)[oa]s?\b|` +
		`\b(?:zahlung|abbuchung|buchung|[üu]berweisung|geb[üu]hr|belastung|kauf|abo)\w*,?\s+(?:die|der|den|denen)\s+ich\s+(?:nie|nicht|niemals)\s+(?:\w+\s+)?(?:gemacht|get[äa]tigt|autorisiert|zugestimmt|veranlasst|kenne|erkenne|bestellt|abgeschlossen)\b|\b(?:unbekannte|nicht\s+autorisierte|unautorisierte)\s+(?:zahlung|abbuchung|buchung|belastung)\w*\b|` +
		`\b(?:paiements?|pr[ée]l[èe]vements?|d[ée]bits?|achats?|frais|virements?|transactions?|abonnements?)\s+que\s+je\s+n'?(?:ai|avais)\s+(?:jamais|pas)\s+(?:\w+\s+)?(?:fait|faits|faites|effectu[ée]e?s?|autoris[ée]e?s?|accept[ée]e?s?|demand[ée]e?s?|command[ée]e?s?)\b|\b(?:paiements?|pr[ée]l[èe]vements?|d[ée]bits?|transactions?)\s+(?:non\s+autoris[ée]e?s|inconnue?s|frauduleu(?:x|ses?))\b|` +
		`\b(?:pagamentos?|cobran[çc]as?|compras?|transfer[êe]ncias?|taxas?|transa[çc][õo]es|transa[çc][ãa]o|assinaturas?|d[ée]bitos?)\s+que\s+(?:eu\s+)?(?:n[ãa]o|nunca)\s+(?:\w+\s+)?(?:fiz|autorizei|reconhe[çc]o|aceitei|pedi|contratei)\b|\b(?:cobran[çc]as?|pagamentos?|compras?)\s+(?:n[ãa]o\s+autorizad|desconhecid|fraudulent)[oa]s?\b|` +
		`\b(?:pagamenti|pagamento|addebiti|addebito|acquisti|acquisto|bonifici|bonifico|commission[ei]|transazion[ei]|abbonament[oi])\s+che\s+(?:io\s+)?non\s+ho\s+(?:mai\s+)?(?:fatto|fatti|effettuat[oaie]|autorizzat[oaie]|accettat[oaie]|richiest[oaie]|ordinat[oaie])\b|\b(?:addebiti|pagamenti|transazioni)\s+(?:non\s+autorizzat|sconosciut|fraudolent)[ie]\b|` +
		`\b(?:betalingen|betaling|afschrijvingen|afschrijving|kosten|transacties|transactie|aankopen|abonnement)\s+die\s+ik\s+(?:niet|nooit)\s+(?:heb\s+)?(?:gedaan|gemaakt|goedgekeurd|herken|geautoriseerd|afgesloten|besteld)\b|\b(?:onbekende|niet-?geautoriseerde|frauduleuze)\s+(?:betaling|afschrijving|transactie)\w*\b|` +
		`\b(?:p[łl]atno[śs]\w+|transakcj\w+|op[łl]at\w+|obci[ąa][żz]eni\w+|przelew\w*),?\s+(?:kt[óo]r\w+)\s+nie\s+(?:\w+\s+)?(?:zrobi[łl]\w*|wykona[łl]\w*|autoryzowa[łl]\w*|zaakceptowa[łl]\w*|rozpoznaj\w*|zamawia[łl]\w*)\b|\b(?:nieautoryzowan|nieznan)\w+\s+(?:p[łl]atno[śs]\w+|transakcj\w+|obci[ąa][żz]eni\w+)\b`)

	// Someone else sees the user's data: "someone else sees my
	// statements", "other people can see my orders", "I see another
	// user's account".
	reOthersSee = regexp.MustCompile(`(?i)\b(?:someone|somebody|anyone|anybody|a\s+stranger|strangers|other\s+(?:people|users|customers|members)|another\s+(?:person|user|customer|member))(?:\s+else)?\s+(?:can\s+(?:now\s+)?|is\s+able\s+to\s+)?(?:sees?|saw|has\s+seen|view(?:s|ed)?|read(?:s)?|access(?:es|ed)?)\s+(?:all\s+(?:of\s+)?)?(?:my|our)\b|\bi\s+(?:can\s+)?(?:see|saw|get|got|am\s+seeing)\s+(?:another|other|a\s+different|someone\s+else'?s?)\s+(?:\w+\s+)?(?:user|person|customer|member|people|users|customers|account)'?s?\b|` +
		`\b(?:alguien\s+(?:m[áa]s|que\s+no\s+soy\s+yo)|otra\s+persona|otros\s+usuarios|otras\s+personas|desconocidos)\s+(?:puede[n]?\s+)?(?:ve[n]?|vio|vieron|ha[n]?\s+visto|ver|accede[n]?\s+a)\s+(?:tod[oa]s\s+)?(?:mis?|nuestr[oa]s?)\b|\bveo\s+(?:los\s+datos|la\s+cuenta|los\s+movimientos|las\s+compras|los\s+pedidos)\s+de\s+otr[oa]\b|` +
		`\b(?:jemand\s+(?:anderes|anders|fremdes|fremder)|fremde|andere\s+(?:nutzer|benutzer|kunden|personen|leute))\s+(?:kann|k[öo]nnen|konnte|konnten)?\s*(?:sieht|sehen|sah|sahen|einsehen|lesen|liest|zugreifen\s+auf|hat\s+zugriff\s+auf)\s+(?:alle\s+)?(?:meine|meinen|meinem|mein|unsere)\b|\bich\s+sehe\s+(?:die\s+)?(?:daten|konto\w*|buchungen|bestellungen|nachrichten)\s+(?:von\s+)?(?:einem\s+)?(?:anderen|fremden)\b|` +
		`\b(?:quelqu'un\s+d'autre|une\s+autre\s+personne|d'autres\s+(?:utilisateurs|personnes|clients)|des\s+inconnus)\s+(?:peu(?:t|vent)\s+)?(?:voi(?:t|ent|r)|a\s+vu|ont\s+vu|acc[èe]de(?:nt|r)?\s+[àa])\s+(?:tou(?:te)?s\s+)?(?:mes|mon|ma|nos|notre)\b|\bje\s+vois\s+(?:les\s+donn[ée]es|le\s+compte|les\s+commandes|les\s+relev[ée]s)\s+d'(?:un\s+)?autre\b|` +
		`\b(?:outra\s+pessoa|algu[ée]m\s+mais|outros\s+usu[áa]rios|outras\s+pessoas|estranhos)\s+(?:pode[m]?\s+)?(?:v[êe](?:em)?|viu|viram|ver|acessa[m]?)\s+(?:tod[oa]s\s+)?(?:os\s+meus|as\s+minhas|o\s+meu|a\s+minha|meus|minhas|meu|minha)\b|\bvejo\s+(?:os\s+dados|a\s+conta|os\s+pedidos|as\s+compras)\s+de\s+outr[oa]\b|` +
		`\b(?:qualcun\s+altro|un'altra\s+persona|altri\s+utenti|altre\s+persone|estranei)\s+(?:pu[òo]\s+|possono\s+)?(?:vede(?:re)?|vedono|ha\s+visto|hanno\s+visto|accede(?:re)?\s+a)\s+(?:tutt[ie]\s+)?(?:i\s+miei|le\s+mie|il\s+mio|la\s+mia|miei|mie)\b|\bvedo\s+(?:i\s+dati|l'account|gli\s+ordini|i\s+movimenti)\s+di\s+(?:un\s+)?altr[oa]\b|` +
		`\b(?:iemand\s+anders|een\s+ander|andere\s+(?:gebruikers|mensen|klanten)|vreemden)\s+(?:kan\s+|kunnen\s+)?(?:ziet|zien|zag|zagen|heeft\s+toegang\s+tot)\s+(?:al\s+)?(?:mijn|onze)\b|\bik\s+zie\s+(?:de\s+)?(?:gegevens|account|bestellingen)\s+van\s+(?:iemand\s+anders|een\s+ander)\b|` +
		`\b(?:kto[śs]\s+inny|inna\s+osoba|inni\s+u[żz]ytkownicy|obcy)\s+(?:mo[żz]e\s+|mog[ąa]\s+)?(?:widzi|widz[ąa]|widzia[łl]\w*|zobaczy[ćc]|ma\s+dost[ęe]p\s+do)\s+(?:wszystkie\s+)?(?:moj\w*|nasz\w*)\b`)

	// The app deleted the user's things, beyond reDestroyed's forms:
	// "la app borró todo el historial", "a effacé tout l'historique".
	reDestroyedMore = regexp.MustCompile(`(?i)\b(?:it|app|update|sync|system|this|the\s+\w+)\s+(?:has\s+|just\s+|then\s+)?(?:deleted|erased|wiped|lost)\s+(?:all\s+(?:of\s+)?|everything|my\s+entire|the\s+entire|the\s+whole)\b|` +
		`\b(?:borr[óo]|ha\s+borrado)\s+(?:tod[oa]s?\s+)?(?:mis?|los|las|el|la|nuestr[oa]s?)\b|\b(?:elimin[óo]|ha\s+eliminado)\s+(?:tod[oa]s?\s+)?(?:mis?|nuestr[oa]s?)\b|\b(?:borr[óo]|elimin[óo]|ha\s+borrado|ha\s+eliminado)\s+todo\b|` +
		`\bhat\s+(?:\w+\s+){0,4}(?:alles|alle|meine?n?|unsere?n?|den\s+ganzen|die\s+ganze|das\s+ganze)\s+(?:\w+\s+){0,3}(?:gel[öo]scht|[üu]berschrieben)\b|` +
		`\ba\s+(?:tout\s+)?(?:effac[ée]|[ée]cras[ée])\s+(?:tou(?:te)?s?\s+)?(?:l'|le|la|les|mes|mon|ma|nos|notre)\b|\ba\s+(?:tout\s+)?supprim[ée]\s+(?:tou(?:te)?s?\s+)?(?:mes|mon|ma|nos|notre)\b|\ba\s+tout\s+(?:effac[ée]|supprim[ée])\b|` +
		`\bapagou\s+(?:tud[oa]|(?:tod[oa]s?\s+)?(?:o|a|os|as|meus|minhas|meu|minha)\b)|\b(?:excluiu|deletou)\s+(?:tud[oa]|(?:tod[oa]s?\s+)?(?:os\s+meus|as\s+minhas|o\s+meu|a\s+minha|meus|minhas|meu|minha)\b)|` +
		`\bha\s+(?:cancellato|eliminato)\s+(?:tutt[oaie]\s+)?(?:i\s+miei|le\s+mie|il\s+mio|la\s+mia|lo\s+storico|la\s+cronologia)\b|\bha\s+(?:cancellato|eliminato)\s+tutt[oaie]\b|` +
		`\bheeft\s+(?:\w+\s+){0,2}(?:al\s+)?(?:mijn|onze|alles|alle)\s+(?:\w+\s+){0,2}(?:verwijderd|gewist)\b|` +
		`\b(?:usun[ęe][łl]\w*|skasowa[łl]\w*|wykasowa[łl]\w*)\s+(?:ca[łl][ąa]\s+|ca[łl]y\s+|wszystk\w+\s+)?(?:moj\w*|histori\w+|dane)\b`)

	// A statement that something just will not work: "no hay manera de
	// que funcione", "can't get it to work", "non c'è verso".
	reWillNotWork = regexp.MustCompile(`(?i)\bno\s+hay\s+(?:manera|forma|modo)\s+de\s+que\s+(?:\w+\s+){0,4}(?:funcione|cargue|abra|guarde|sincronice|arranque|ande|conecte|env[ií]e|inicie)\b|\b(?:can'?t|cannot|could\s+not|couldn'?t)\s+get\s+(?:it|this|the\s+app|the\s+\w+)\s+to\s+(?:work|load|open|sync|start|connect)\b|\bno\s+way\s+to\s+get\s+(?:it|this|the\s+\w+)\s+(?:to\s+)?work(?:ing)?\b|\bkriege\s+(?:es|die\s+app|das)\s+(?:einfach\s+)?nicht\s+(?:zum\s+laufen|hin)\b|\bimpossible\s+de\s+(?:la|le)\s+faire\s+(?:fonctionner|marcher)\b|\bn[ãa]o\s+(?:tem|h[áa])\s+jeito\s+de\s+(?:\w+\s+){0,3}funcionar\b|\bnon\s+c'[èe]\s+(?:verso|modo)\s+di\s+far(?:la|lo)\s+funzionare\b|\bkrijg\s+(?:het|de\s+app)\s+niet\s+(?:werkend|aan\s+de\s+praat)\b|\bnie\s+da\s+si[ęe]\s+(?:\w+\s+)?uruchomi[ćc]\b`)

	// A sentence in the first person: the writer's own account.
	reFirstPerson = regexp.MustCompile(`(?i)\b(?:i|me|my|mine|we|us|our|yo|mi|mis|me|nosotros|ich|mich|mir|mein\w*|wir|uns\w*|je|j'|moi|mon|mes|nous|nos|notre|eu|meu|minha|meus|minhas|n[óo]s|io|mio|mia|miei|mie|noi|ik|mij|mijn|wij|mnie|m[óo]j|moj\w*|my)\b`)
)

// moreHarm lists the harms of this file's patterns.
func moreHarm(text string, has func(string) bool) []string {
	var out []string
	if (has("transfer") || has("money")) && has("not_received") {
		out = append(out, "money sent, not received")
	}
	lower := strings.ToLower(text)
	for _, p := range []struct {
		name    string
		re      *regexp.Regexp
		anchors []string
	}{{"unrecognised charge", reUnrecognisedCharge, anchorsUnrecognised}, {"exposure", reOthersSee, anchorsOthersSee}, {"data destroyed", reDestroyedMore, anchorsDestroyedMore}} {
		if !containsAny(lower, p.anchors) {
			continue
		}
		if loc := p.re.FindStringIndex(text); loc != nil && !reHypothetical.MatchString(text[max(0, loc[0]-30):loc[1]]) {
			out = append(out, p.name+" "+quoteLower(text[loc[0]:loc[1]]))
		}
	}
	return out
}

// Anchors: each pattern above can only match a text holding one of its
// anchors, so most texts are not scanned by it at all.
var (
	anchorsUnrecognised  = []string{"not", "n't", "never", "no ", "nunca", "nie", "nicht", "jamais", "pas ", "não", "nao", "non ", "niet", "nooit", "unrecogn", "unauthori", "unknown", "fraud", "autorizad", "desconoc", "unbekannt", "autorisiert", "inconnu", "desconhec", "autorizzat", "sconosciut", "onbekend", "geautoriseerd", "nieznan", "nieautoryz"}
	anchorsOthersSee     = []string{"someone", "somebody", "anyone", "anybody", "stranger", "other", "another", "i see", "i can see", "i saw", "i get", "i got", "i am seeing", "alguien", "otra", "otros", "desconocid", "veo ", "jemand", "fremd", "andere", "ich sehe", "quelqu", "autre", "inconnu", "je vois", "outra", "outro", "algu", "estranh", "vejo", "qualcun", "altr", "estrane", "vedo", "iemand", "een ander", "vreemd", "ik zie", "kto", "inn", "obcy"}
	anchorsDestroyedMore = []string{"delet", "eras", "wipe", "lost", "borr", "elimin", "gelösch", "gelosch", "schrieb", "effac", "cras", "suppr", "apag", "exclu", "cancell", "verwijder", "gewist", "usun", "skasow", "wykasow"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func quoteLower(s string) string { return `"` + strings.ToLower(s) + `"` }

// statedSentences returns the text without the sentences that name a
// harm only as something that might or does not happen ("so I never
// lose my notes"), or "" and false when no sentence is hypothetical.
func statedSentences(text string) (string, bool) {
	if !reHypothetical.MatchString(text) {
		return text, false
	}
	var kept []string
	for _, s := range sentences(text) {
		if !reHypothetical.MatchString(s) {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, "\n"), true
}

// ownHarm lists the harms a text states as done to the writer: in
// first-person sentences that are no question and carry no spam cue of
// their own. A pitch that asks "was your account hacked?" states none.
func ownHarm(text string) []string {
	ss := sentences(text)
	if len(ss) < 2 {
		return nil // the one sentence is the pitch itself
	}
	var kept []string
	for _, s := range ss {
		s = strings.TrimSpace(s)
		if strings.HasSuffix(s, "?") || !reFirstPerson.MatchString(s) || spamEvidence(s).score > 0 {
			continue
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return nil
	}
	own := strings.Join(kept, "\n")
	a := analyze(own)
	return harmEvidence(own, func(c string) bool { return a.bag["~"+c] > 0 })
}

// distinctSentences returns text with each sentence that repeats an
// earlier one (ignoring case) left out: a cue counts once however often
// it is pasted.
func distinctSentences(text string) string {
	ss := sentences(text)
	if len(ss) < 2 {
		return text
	}
	seen := make(map[string]bool, len(ss))
	var kept []string
	for _, s := range ss {
		k := strings.ToLower(s)
		if seen[k] {
			continue
		}
		seen[k] = true
		kept = append(kept, s)
	}
	if len(kept) == len(ss) {
		return text
	}
	return strings.Join(kept, "\n")
}
