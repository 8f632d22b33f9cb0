package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/triage"
)

// The decisions of a case page. A decision's subject is JSON an agent
// wrote: the page reads it into words (the triage gate as a card, any
// other kind field by field), every piece escaped by the template, with
// the exact canonical bytes one click away. The person answers over the
// digest the page showed; the store decides.

// decisionView is one human decision requested on the case.
type decisionView struct {
	signoff.Decision
	// Subject is the subject indented for reading; Canonical its exact
	// stored bytes, which SubjectDigest covers.
	Subject, Canonical string
	// CanDecide: the decision is pending and unexpired and the signed-in
	// role decides (owner, operator). Only then does the page offer its
	// form; the store checks all of it again.
	CanDecide bool
	// Gate is the triage gate's card, for a triage_ticket decision whose
	// subject decodes; Fields the generic reading of any other subject.
	Gate   *gateCard
	Fields []fieldView
	// Severities are the choices of the gate's severity edit.
	Severities []string
	// Form is what the person typed when the page comes back to them
	// with a refusal; Severity is the choice the form shows.
	Form     decisionForm
	Severity string
	// Amended is the answer beyond yes or no, in words; AmendedDigest the
	// digest of the subject with it applied: what was decided.
	Amended       []fieldView
	AmendedDigest string
}

// decisionForm is a refused answer shown again beside its form.
type decisionForm struct {
	ID, Message, Reason, Severity string
}

// fieldView is one field of a subject in words. Long text is shown as a
// block; Nested is indented JSON.
type fieldView struct {
	Key, Value string
	Long       bool
}

// gateCard is the triage gate's subject in words.
type gateCard struct {
	Title, Body, Component, Owner, Severity, Rationale, RegressionOf string
	Confidence                                                       string
	// Why are the rules that held the ticket for a person.
	Why []string
	// Crash is what the crash log says; Evidence the rest of the
	// assessment's numbers.
	Crash    []string
	Versions []shareView
	Evidence []fieldView
	// Verdict and Investigation are the investigator's; Duplicates the
	// search hits it saw, best first (the candidates it did not take).
	Verdict, Investigation string
	Duplicates             []hitView
	// TicketID is the ticket the run filed after this decision, if any.
	TicketID string
	// Extra are the subject's members the card does not read (other keys,
	// or a known one in another case, which Go's decoding would fold onto
	// it): the digest covers them, so they are shown.
	Extra []fieldView
	// SevClass is the severity's CSS class, only for a severity the
	// server knows (an agent's subject never names a class).
	SevClass string
	// NotRunGate: the case's triage run does not name this decision as
	// its gate, so an approval of it files nothing (yet).
	NotRunGate bool
}

// decisionsKey carries a refused answer from decide to the page it
// re-renders.
type decisionsKey struct{}

func (s *server) decisions(ctx context.Context, by signoff.Actor, c signoff.Case) ([]decisionView, error) {
	ds, err := s.store.ListDecisions(ctx, by, c.ID)
	if err != nil {
		if signoff.ErrorCode(err) == signoff.EFORBIDDEN {
			return nil, nil
		}
		return nil, err
	}
	form, _ := ctx.Value(decisionsKey{}).(decisionForm)
	var run *crew.State
	now := s.o.Now()
	out := make([]decisionView, 0, len(ds))
	for _, d := range ds {
		if d.Status == signoff.DecisionPending && !now.Before(d.ExpiresAt) {
			d.Status = signoff.DecisionExpired
		}
		v := decisionView{Decision: d, Subject: indentJSON(d.Subject), Canonical: string(d.Subject),
			CanDecide: d.Status == signoff.DecisionPending && identity.Can(by.Role, identity.OpDecisionDecide)}
		if form.ID == d.ID {
			v.Form = form
		}
		if d.Kind == crew.GateKind {
			if run == nil {
				run = s.triageState(ctx, by, c)
			}
			v.Gate = gateCardOf(d, run)
		}
		if v.Gate == nil {
			v.Fields = subjectFields(d.Subject)
		} else if triage.SeverityRank(v.Gate.Severity) >= 0 {
			// The edit starts at the subject's severity: one the select
			// cannot show would start at another, sent unseen as an
			// amendment, so such a subject offers no edit.
			v.Severities = triage.Severities
			v.Severity = v.Gate.Severity
			if v.Form.Severity != "" {
				v.Severity = v.Form.Severity
			}
		}
		if len(d.Amendment) > 0 {
			v.Amended = subjectFields(d.Amendment)
			v.AmendedDigest = amendedDigest(d.Subject, d.Amendment)
		}
		out = append(out, v)
	}
	return out, nil
}

// triageState reads the case's triage run for the gate's card: the
// search hits, the severity the numbers gave, the gate's ticket. A run
// that cannot be read leaves the card with the subject alone.
func (s *server) triageState(ctx context.Context, by signoff.Actor, c signoff.Case) *crew.State {
	st := &crew.State{}
	if tr, err := s.store.GetTriage(ctx, by, c.ID); err == nil && json.Unmarshal(tr.State, st) != nil {
		return &crew.State{}
	}
	return st
}

// gateSubject is what the crew's writer asks the gate about: decoded
// here only to be shown.
type gateSubject = crew.TicketSubject

// gateSubjectKeys are the members gateSubject reads, exactly as spelled
// in its JSON tags.
var gateSubjectKeys = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeFor[gateSubject]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}()

// gateCardOf reads a triage gate's subject into its card, or nil when it
// does not decode (the generic reading shows it then).
func gateCardOf(d signoff.Decision, st *crew.State) *gateCard {
	var sub gateSubject
	if json.Unmarshal(d.Subject, &sub) != nil || sub.Title == "" {
		return nil
	}
	g := &gateCard{Title: sub.Title, Body: sub.Body, Component: sub.Component, Owner: sub.Owner, Severity: sub.Severity,
		Rationale: sub.Rationale, RegressionOf: sub.RegressionOf, Confidence: strconv.FormatFloat(sub.Confidence, 'f', 2, 64)}
	g.Why = gateWhy(sub, st)
	for _, f := range subjectFields(d.Subject) {
		if !gateSubjectKeys[f.Key] {
			g.Extra = append(g.Extra, f)
		}
	}
	if triage.SeverityRank(sub.Severity) >= 0 {
		g.SevClass = "sev-" + sub.Severity
	}
	// Only a pending one: an earlier round's answered gate is no longer
	// the run's, and did what it did.
	g.NotRunGate = d.Status == signoff.DecisionPending && (st.Gate == nil || st.Gate.DecisionID != d.ID)
	g.Crash, g.Versions, g.Evidence = crashWords(sub.Evidence)
	if inv := st.Investigation; inv != nil {
		g.Verdict, g.Investigation = inv.Verdict, inv.Rationale
	}
	for _, h := range st.Hits {
		g.Duplicates = append(g.Duplicates, hitView{ID: h.ID, Title: h.Title, Status: h.Status, Component: h.Component, FixedIn: h.FixedIn,
			Resolves: h.Resolves, Score: fmt.Sprintf("%.3f", h.Score), Strong: h.Strong, Why: strings.Join(h.Why, "; ")})
	}
	sort.SliceStable(g.Duplicates, func(i, j int) bool { return g.Duplicates[i].Score > g.Duplicates[j].Score })
	if len(g.Duplicates) > 5 {
		g.Duplicates = g.Duplicates[:5]
	}
	if gt := st.Gate; gt != nil && gt.DecisionID == d.ID {
		g.TicketID = gt.TicketID
	}
	return g
}

// gateWhy says which of the gate's rules hold the ticket, read from the
// triage run the server keeps (crew.State) as the crew's gate reads it:
// the higher of the recorded severity and the one the server's numbers
// give at or above crew.GateSeverity, or an investigation less confident
// than crew.MinConfidence. The subject is agent-written: its own
// severity and confidence never decide what the card says held it; where
// they differ from the run's, the card says so.
func gateWhy(sub gateSubject, st *crew.State) []string {
	var why []string
	if inv := st.Investigation; inv == nil {
		why = append(why, "The case's triage run records no investigation: the gate's confidence rule cannot be read.")
	} else if inv.Confidence < crew.MinConfidence {
		why = append(why, fmt.Sprintf("The investigation's confidence is %.2f, below the gate's floor of %.2f: a person checks a ticket triage is unsure of.", inv.Confidence, crew.MinConfidence))
	}
	recorded := ""
	if a := st.Assessment; a != nil {
		recorded = a.Severity
	}
	sev := recorded
	if st.Assessed != "" && triage.SeverityRank(st.Assessed) > triage.SeverityRank(sev) {
		if recorded == "" {
			why = append(why, fmt.Sprintf("The crash and release numbers give severity %s.", st.Assessed))
		} else {
			why = append(why, fmt.Sprintf("The crash and release numbers give severity %s, higher than the %s recorded: the gate reads the higher one.", st.Assessed, recorded))
		}
		sev = st.Assessed
	}
	if sev != "" && triage.SeverityRank(sev) >= triage.SeverityRank(crew.GateSeverity) {
		why = append(why, fmt.Sprintf("Severity %s is at or above %s, the gate's floor: a person approves every ticket that serious before it is filed.", sev, crew.GateSeverity))
	}
	if len(why) == 0 {
		why = append(why, "The triage run's numbers name no rule of the gate that holds it; the case's timeline records why triage asked.")
	}
	if recorded != "" && sub.Severity != recorded {
		why = append(why, fmt.Sprintf("The subject says severity %q; the triage run recorded %s.", sub.Severity, recorded))
	}
	if inv := st.Investigation; inv != nil && fmt.Sprintf("%.2f", sub.Confidence) != fmt.Sprintf("%.2f", inv.Confidence) {
		why = append(why, fmt.Sprintf("The subject says confidence %.2f; the triage run recorded %.2f.", sub.Confidence, inv.Confidence))
	}
	return why
}

// crashWords puts the assessment's crash numbers into sentences, the
// version shares into a list, and every other piece of evidence into
// fields.
func crashWords(ev map[string]any) ([]string, []shareView, []fieldView) {
	num := func(k string) (float64, bool) {
		f, ok := ev[k].(float64)
		return f, ok
	}
	str := func(k string) string {
		s, _ := ev[k].(string)
		return s
	}
	used := map[string]bool{}
	use := func(ks ...string) {
		for _, k := range ks {
			used[k] = true
		}
	}
	var crash []string
	events, okE := num("events")
	users, okU := num("users")
	if okE && okU {
		use("events", "users")
		line := fmt.Sprintf("%.0f crash events from %.0f distinct users", events, users)
		if sig := str("signature"); sig != "" {
			line += " with the signature " + sig
		}
		if top := str("stack_top"); top != "" {
			line += ", top of stack " + top
		}
		if all, ok := num("crash_log_users"); ok && all > 0 {
			line += fmt.Sprintf(": %.0f%% of the %.0f users in the crash log", 100*users/all, all)
			use("crash_log_users")
		}
		if events == 0 {
			line = "No crash signature in the crash log matches this report (0 events, 0 users)"
		}
		crash = append(crash, line+".")
		use("signature", "stack_top")
	}
	if first, last := str("first_seen"), str("last_seen"); first != "" || last != "" {
		crash = append(crash, fmt.Sprintf("First seen %s, last seen %s.", first, last))
		use("first_seen", "last_seen")
	}
	if v := str("reporter_version"); v != "" {
		line := "The reporter runs version " + v
		if share, ok := num("version_share_pct"); ok {
			line += fmt.Sprintf(", which %.0f%% of active users run", share)
			use("version_share_pct")
		}
		crash = append(crash, line+".")
		use("reporter_version")
	}
	if days, ok := num("days_to_code_freeze"); ok {
		if days < 0 {
			crash = append(crash, fmt.Sprintf("The code freeze of %s (%s) passed %.0f day(s) ago.", str("next_release"), str("code_freeze"), -days))
		} else {
			crash = append(crash, fmt.Sprintf("%.0f day(s) to the code freeze of %s (%s).", days, str("next_release"), str("code_freeze")))
		}
		use("days_to_code_freeze", "next_release", "code_freeze")
	}
	var versions []shareView
	if m, ok := ev["versions"].(map[string]any); ok {
		counts := map[string]int{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				counts[k] = int(f)
			}
		}
		versions = shares(counts)
		use("versions")
	}
	var rest []fieldView
	for k, v := range ev {
		if used[k] {
			continue
		}
		rest = append(rest, fieldOf(k, v))
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Key < rest[j].Key })
	return crash, versions, rest
}

// fieldOf words one decoded JSON value: strings as they are, numbers and
// booleans as JSON writes them, anything nested as indented JSON.
func fieldOf(k string, v any) fieldView {
	switch x := v.(type) {
	case string:
		return fieldView{Key: k, Value: x, Long: strings.Contains(x, "\n") || len(x) > 160}
	case nil:
		return fieldView{Key: k, Value: "(none)"}
	case float64, bool:
		b, _ := json.Marshal(x)
		return fieldView{Key: k, Value: string(b)}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fieldView{Key: k, Value: fmt.Sprint(v)}
	}
	return fieldView{Key: k, Value: string(b), Long: true}
}

// subjectFields reads a JSON object field by field, keys sorted; any
// other JSON is one field.
func subjectFields(raw json.RawMessage) []fieldView {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return []fieldView{{Key: "subject", Value: string(raw), Long: true}}
		}
		return []fieldView{fieldOf("subject", v)}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]fieldView, 0, len(keys))
	for _, k := range keys {
		out = append(out, fieldOf(k, m[k]))
	}
	return out
}

// amendedDigest is the digest of the subject with the amendment's members
// written over its own: the subject as the person decided it (the triage
// gate files its ticket with the amended severity). "" when either does
// not decode as an object.
func amendedDigest(subject, amendment json.RawMessage) string {
	var sub, am map[string]json.RawMessage
	if json.Unmarshal(subject, &sub) != nil || json.Unmarshal(amendment, &am) != nil || sub == nil {
		return ""
	}
	for k, v := range am {
		sub[k] = v
	}
	d, err := canonical.Digest(sub)
	if err != nil {
		return ""
	}
	return d
}

// maxWebReason bounds a decision's reason typed on the page.
const maxWebReason = 2000

// decide answers a pending decision from its form on the case page. The
// form carries the digest of the subject the page showed: a decision
// superseded since (another subject) is refused by the store as a
// conflict, never applied to what the person did not see. At the triage
// gate the person may change the severity: the change is the decision's
// amendment (store.DecideAmended, as the API sends it), so the ticket is
// filed with it. A refused answer comes back on the case page, the
// message beside the form and what was typed kept.
func (s *server) decide(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	caseID, id := r.PathValue("id"), r.PathValue("decision")
	if !identity.Can(by.Role, identity.OpDecisionDecide) {
		return signoff.Errorf(signoff.EFORBIDDEN, "Your role (%s) does not decide.", by.Role)
	}
	d, err := s.store.GetDecision(ctx, by, id)
	if err != nil || d.CaseID != caseID {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such decision on this case.")
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	severity := r.PostFormValue("severity")
	again := func(err error) error {
		return s.caseAgain(w, r, sess, err, decisionsKey{}, decisionForm{ID: id, Message: signoff.ErrorMessage(err), Reason: reason, Severity: severity})
	}
	var approve bool
	switch r.PostFormValue("answer") {
	case "approve":
		approve = true
	case "reject":
	default:
		return again(signoff.Errorf(signoff.EINVALID, "Choose Approve or Reject."))
	}
	if !approve && reason == "" {
		return again(signoff.Errorf(signoff.EINVALID, "Say why you reject it: the reason goes to whoever asked."))
	}
	if len(reason) > maxWebReason {
		return again(signoff.Errorf(signoff.EINVALID, "The reason is too long (at most %d characters).", maxWebReason))
	}
	digest := r.PostFormValue("subject_digest")
	if digest == "" {
		return again(signoff.Errorf(signoff.EINVALID, "The form carries no subject digest: reload the page and decide on what it shows."))
	}
	// The severity edit: only an approval carries it, and only a change
	// is an amendment (the store checks the value against the kind).
	var amendment json.RawMessage
	if approve && severity != "" && d.Kind == crew.GateKind {
		var sub gateSubject
		if json.Unmarshal(d.Subject, &sub) == nil && severity != sub.Severity {
			if amendment, err = json.Marshal(map[string]string{"severity": severity}); err != nil {
				return fmt.Errorf("amendment: %w", err)
			}
		}
	}
	if reason == "" {
		reason = "approved on the web desk"
	}
	if _, err := s.store.DecideAmended(ctx, by, id, digest, approve, reason, amendment); err != nil {
		switch signoff.ErrorCode(err) {
		case signoff.EINVALID, signoff.ECONFLICT:
			return again(err)
		}
		return fmt.Errorf("decide %s: %w", id, err)
	}
	http.Redirect(w, r, "/cases/"+caseID+"#decision-"+id, http.StatusSeeOther)
	return nil
}

// caseAgain renders the case page again for a refused post, with the
// refusal's status and the form's state in the context under key, where
// the section that owns the form finds it. A refusal that is not about
// the form (the case is gone) is the error page.
func (s *server) caseAgain(w http.ResponseWriter, r *http.Request, sess signoff.WebSession, refusal error, key, form any) error {
	status := signoff.Mapping(refusal).HTTPStatus
	if status < 400 || signoff.ErrorCode(refusal) == signoff.EINTERNAL {
		return refusal
	}
	ctx := context.WithValue(r.Context(), key, form)
	if err := s.casePage(&refusedWriter{ResponseWriter: w, status: status}, r.WithContext(ctx), sess); err != nil {
		return refusal
	}
	return nil
}

// refusedWriter answers a page rendered as 200 with a refusal's status:
// the page is the form again, but the post did not succeed.
type refusedWriter struct {
	http.ResponseWriter
	status int
}

func (w *refusedWriter) WriteHeader(code int) {
	if code == http.StatusOK {
		code = w.status
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
