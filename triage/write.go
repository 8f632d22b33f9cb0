package triage

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Kinds of writer action.
const (
	ActionCreateTicket = "create_ticket"
	ActionComment      = "comment"
	ActionClarify      = "clarify"
)

// Action is the writer's artifact: a ticket draft, a +1 comment on an
// existing ticket, or a clarification reply to the reporter. Language is
// the language Body is written in.
type Action struct {
	Kind     string `json:"kind"`
	TicketID string `json:"ticket_id,omitempty"` // the ticket a comment goes to
	Title    string `json:"title,omitempty"`
	Body     string `json:"body"`
	Language string `json:"language"`
}

// WriteInput is what the writer works from. TicketID is the ticket a
// duplicate resolved to (the ticket-id guard's answer).
type WriteInput struct {
	Item          Item
	Intake        Intake
	Investigation Investigation
	Assessment    *Assessment
	TicketID      string
}

// Write drafts the action for the investigation's verdict: a ticket for
// new, a +1 comment with the reporter's device, OS and version for
// duplicate, and for needs_info a reply in the reporter's language asking
// for what is missing.
func Write(in WriteInput) Action {
	switch in.Investigation.Verdict {
	case VerdictDuplicate:
		return writeComment(in)
	case VerdictNew:
		return writeTicket(in)
	}
	return writeClarify(in)
}

func env(in Intake) string {
	var parts []string
	for _, p := range [][2]string{{"device", in.Device}, {"OS", in.OS}, {"app", in.AppVersion}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		} else {
			parts = append(parts, p[0]+" unknown")
		}
	}
	return strings.Join(parts, ", ")
}

func writeComment(in WriteInput) Action {
	t := in.TicketID
	if t == "" {
		t = in.Investigation.Resolved
	}
	var b strings.Builder
	fmt.Fprintf(&b, "+1 from %s (%s", in.Item.ID, sourceOf(in.Item))
	if in.Item.ReceivedAt != "" {
		fmt.Fprintf(&b, ", %s", in.Item.ReceivedAt)
	}
	fmt.Fprintf(&b, "): %s.\n", env(in.Intake))
	if in.Intake.Language != "" && in.Intake.Language != "en" {
		fmt.Fprintf(&b, "Reported in %s.\n", in.Intake.Language)
	}
	fmt.Fprintf(&b, "\n> %s\n", quote(in.Item.Text, 400))
	if in.Investigation.Signature != "" {
		fmt.Fprintf(&b, "\nCrash signature: %s.\n", in.Investigation.Signature)
	}
	fmt.Fprintf(&b, "\nMatched via %s (confidence %.2f).", in.Investigation.DuplicateOf, in.Investigation.Confidence)
	return Action{Kind: ActionComment, TicketID: t, Body: b.String(), Language: "en"}
}

func sourceOf(it Item) string {
	if it.Source == "" {
		return "feedback"
	}
	return strings.ReplaceAll(it.Source, "_", " ")
}

func quote(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		s = strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

// problemLabels name a report's main problem in a ticket title, most
// telling first.
var problemLabels = []struct {
	concepts []string
	label    string
}{
	{[]string{"data_loss"}, "Data loss"},
	{[]string{"charge", "duplicate"}, "Duplicate charge"},
	{[]string{"charge", "not_received"}, "Charged but not delivered"},
	{[]string{"crash"}, "Crash"},
	{[]string{"freeze"}, "Freeze"},
	{[]string{"blank_screen"}, "Blank screen"},
	{[]string{"charge"}, "Billing problem"},
	{[]string{"negative"}, "Negative value"},
	{[]string{"performance"}, "Slowness"},
	{[]string{"error"}, "Error"},
	{[]string{"broken"}, "Not working"},
	{[]string{"display"}, "Display problem"},
}

func problemLabel(bag terms) (string, []string) {
	for _, p := range problemLabels {
		ok := true
		for _, c := range p.concepts {
			if bag["~"+c] == 0 {
				ok = false
			}
		}
		if ok {
			if p.concepts[0] == "data_loss" && !dataLossCue(bag) {
				continue
			}
			return p.label, p.concepts
		}
	}
	return "Bug", nil
}

func writeTicket(in WriteInput) Action {
	a := analyze(in.Item.Text)
	label, concepts := problemLabel(a.bag)
	sentence := problemSentence(in.Item.Text, concepts)
	var title strings.Builder
	if in.Investigation.RegressionOf != "" {
		fmt.Fprintf(&title, "Regression of %s: ", in.Investigation.RegressionOf)
	}
	comp := ""
	if in.Assessment != nil {
		comp = in.Assessment.Component
	}
	switch {
	case (in.Intake.Language == "en" || in.Intake.Language == "") && label == "Bug":
		title.WriteString(quote(sentence, 90))
	case in.Intake.Language == "en" || in.Intake.Language == "":
		fmt.Fprintf(&title, "%s: %s", label, quote(sentence, 90))
	default:
		// The reporter's own words, so later reports in the language
		// find the filed ticket by its title.
		fmt.Fprintf(&title, "%s in %s: %s (reported in %s)", label, orDash(comp), quote(sentence, 80), in.Intake.Language)
	}
	var ctx []string
	if in.Intake.AppVersion != "" {
		ctx = append(ctx, in.Intake.AppVersion)
	}
	if in.Intake.OS != "" {
		ctx = append(ctx, in.Intake.OS)
	}
	if len(ctx) > 0 {
		fmt.Fprintf(&title, " [%s]", strings.Join(ctx, ", "))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Reported by %s via %s (%s", orDash(in.Item.Author), sourceOf(in.Item), in.Item.ID)
	if in.Item.ReceivedAt != "" {
		fmt.Fprintf(&b, ", %s", in.Item.ReceivedAt)
	}
	b.WriteString(").\n\n")
	fmt.Fprintf(&b, "Environment: %s.\n", env(in.Intake))
	if in.Intake.Language != "" && in.Intake.Language != "en" {
		fmt.Fprintf(&b, "Language: %s.\n", in.Intake.Language)
	}
	fmt.Fprintf(&b, "\nReport:\n> %s\n", quote(in.Item.Text, 1200))
	if len(in.Intake.Steps) > 0 {
		b.WriteString("\nSteps (from the report):\n")
		for i, s := range in.Intake.Steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
	}
	if in.Investigation.RegressionOf != "" {
		fmt.Fprintf(&b, "\nRegression: %s was fixed earlier and the reporter is on %s.\n", in.Investigation.RegressionOf, orDash(in.Intake.AppVersion))
	}
	if in.Assessment != nil {
		as := in.Assessment
		fmt.Fprintf(&b, "\nSeverity: %s. Component: %s. Owner: %s.\n%s\n", as.Severity, as.Component, orDash(as.Owner), as.Rationale)
		if len(as.Evidence) > 0 {
			b.WriteString("\nEvidence:\n")
			ks := make([]string, 0, len(as.Evidence))
			for k := range as.Evidence {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				fmt.Fprintf(&b, "- %s: %s\n", strings.ReplaceAll(k, "_", " "), evidenceValue(as.Evidence[k]))
			}
		}
	}
	fmt.Fprintf(&b, "\nInvestigation: %s (confidence %.2f).", in.Investigation.Rationale, in.Investigation.Confidence)
	return Action{Kind: ActionCreateTicket, Title: title.String(), Body: b.String(), Language: "en"}
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// problemSentence picks the report's sentence that states the problem
// most specifically, for the ticket title: a filed ticket becomes a
// search target for later reports, and a title such as "Here we go
// again" names nothing they could match. Each sentence scores:
//
//   - naming the main problem's concepts (3), any failure kind (1);
//   - what it is about: half a point per content term (cap 3), one per
//     concrete token (identifiers, config keys, error codes, numbers with
//     units) and per quoted string (cap 2);
//   - under two content terms (a greeting, "Here we go again") −3; a
//     sentence too long for a title −1.
//
// The first of the best wins, so the opening statement of the problem is
// kept when it is as specific as any later one. A report that opens with
// its own title (a short first line on its own, naming two things, as an
// issue or an email subject does) keeps it: the reporter already chose
// what names the bug.
func problemSentence(text string, concepts []string) string {
	if h := heading(text); h != "" {
		return h
	}
	ss := sentences(text)
	best, bestScore := "", math.Inf(-1)
	for _, raw := range ss {
		st := strings.TrimRight(strings.TrimSpace(raw), ".!?;:")
		if len([]rune(st)) <= 8 {
			continue
		}
		sc := sentenceSpecificity(st, concepts)
		if sc > bestScore {
			best, bestScore = st, sc
		}
	}
	if best != "" {
		return best
	}
	return strings.TrimSpace(text)
}

func sentenceSpecificity(s string, concepts []string) float64 {
	bag := analyze(s).bag
	sc := 0.0
	for _, c := range concepts {
		if bag["~"+c] > 0 {
			sc += 3
			break
		}
	}
	content, kinds := 0, uint16(0)
	for t := range bag {
		if _, isOS := osWords[t]; isOS || isNumberTerm(t) || t == "~feedback_positive" {
			continue
		}
		kinds |= symptomClasses[t]
		content++
	}
	if kinds != 0 {
		sc++
	}
	sc += min(3, 0.5*float64(content))
	sc += min(2, float64(len(reIdent.FindAllString(s, -1))+len(quotedStrings(s))))
	if content < 2 {
		sc -= 3
	}
	if n := len([]rune(s)); n > 160 {
		sc -= 2
	} else if n > 100 {
		sc--
	}
	return sc
}

// heading returns the report's first line when it stands as a title: a
// line of its own, followed by more text, of 12 to 100 characters, not
// ending a sentence or addressing someone, naming at least two things.
func heading(text string) string {
	text = strings.TrimSpace(text)
	i := strings.IndexByte(text, '\n')
	if i < 0 {
		return ""
	}
	h := strings.TrimSpace(text[:i])
	if n := len([]rune(h)); n < 12 || n > 100 || strings.TrimSpace(text[i:]) == "" {
		return ""
	}
	if strings.ContainsAny(h[len(h)-1:], ".,;:!") {
		return "" // a sentence, a greeting ("Hello,") or a salutation
	}
	content := 0
	for t := range analyze(h).bag {
		if _, isOS := osWords[t]; !isOS && !isNumberTerm(t) && t != "~feedback_positive" {
			content++
		}
	}
	if content < 3 {
		return ""
	}
	return h
}

// clarifyTemplate is a reply asking for details, per language. %s is the
// list of what is missing, in that language.
type clarifyTemplate struct {
	greeting, body, closing    string
	device, os, version, steps string
	and                        string
}

var clarifyTemplates = map[string]clarifyTemplate{
	"en": {"Hi,", "thanks for letting us know. We want to fix this, but we need a few details to find the problem: %s. What were you doing when it happened?", "Thank you!",
		"your device model", "its operating system version", "the app version (in Settings > About)", "the steps that lead to the problem", "and"},
	"es": {"Hola:", "gracias por avisarnos. Queremos solucionarlo, pero necesitamos algunos datos para encontrar el problema: %s. ¿Qué estabas haciendo cuando ocurrió?", "¡Gracias!",
		"el modelo de tu dispositivo", "la versión del sistema operativo", "la versión de la aplicación (en Ajustes > Acerca de)", "los pasos que llevan al problema", "y"},
	"de": {"Hallo,", "danke für deine Meldung. Wir möchten das beheben, brauchen aber ein paar Angaben, um das Problem zu finden: %s. Was hast du gerade gemacht, als es passiert ist?", "Vielen Dank!",
		"dein Gerätemodell", "die Version des Betriebssystems", "die App-Version (unter Einstellungen > Info)", "die Schritte, die zum Problem führen", "und"},
	"fr": {"Bonjour,", "merci de nous l'avoir signalé. Nous voulons corriger cela, mais il nous faut quelques informations pour trouver le problème : %s. Que faisiez-vous au moment où c'est arrivé ?", "Merci !",
		"le modèle de votre appareil", "la version du système d'exploitation", "la version de l'application (dans Réglages > À propos)", "les étapes qui mènent au problème", "et"},
	"pt": {"Olá,", "obrigado por nos avisar. Queremos corrigir isso, mas precisamos de alguns detalhes para encontrar o problema: %s. O que você estava fazendo quando aconteceu?", "Obrigado!",
		"o modelo do seu aparelho", "a versão do sistema operacional", "a versão do aplicativo (em Configurações > Sobre)", "os passos que levam ao problema", "e"},
	"it": {"Ciao,", "grazie per la segnalazione. Vogliamo risolverlo, ma ci servono alcuni dettagli per trovare il problema: %s. Cosa stavi facendo quando è successo?", "Grazie!",
		"il modello del tuo dispositivo", "la versione del sistema operativo", "la versione dell'app (in Impostazioni > Info)", "i passaggi che portano al problema", "e"},
	"nl": {"Hallo,", "bedankt voor je melding. We willen dit oplossen, maar we hebben een paar gegevens nodig om het probleem te vinden: %s. Wat was je aan het doen toen het gebeurde?", "Bedankt!",
		"het model van je toestel", "de versie van het besturingssysteem", "de app-versie (in Instellingen > Over)", "de stappen die tot het probleem leiden", "en"},
}

// ClarifyLanguages lists the languages the clarification reply is written
// in; any other falls back to English.
func ClarifyLanguages() []string {
	out := make([]string, 0, len(clarifyTemplates))
	for l := range clarifyTemplates {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func writeClarify(in WriteInput) Action {
	lang := in.Intake.Language
	t, ok := clarifyTemplates[lang]
	if !ok {
		lang, t = "en", clarifyTemplates["en"]
	}
	var missing []string
	if in.Intake.Device == "" {
		missing = append(missing, t.device)
	}
	if in.Intake.OS == "" {
		missing = append(missing, t.os)
	}
	if in.Intake.AppVersion == "" {
		missing = append(missing, t.version)
	}
	if len(in.Intake.Steps) == 0 || len(missing) == 0 {
		missing = append(missing, t.steps)
	}
	list := missing[0]
	if n := len(missing); n > 1 {
		list = strings.Join(missing[:n-1], ", ") + " " + t.and + " " + missing[n-1]
	}
	body := t.greeting + " " + fmt.Sprintf(t.body, list) + " " + t.closing
	return Action{Kind: ActionClarify, Body: body, Language: lang}
}

// evidenceValue renders one evidence value for a ticket: counts by key
// as "key (n)", largest first and at most five, so a ticket lists the
// platforms a crash hit without every device model.
func evidenceValue(v any) string {
	m, ok := v.(map[string]int)
	if !ok {
		return fmt.Sprint(v)
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	var parts []string
	for i, k := range ks {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d more", len(ks)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
