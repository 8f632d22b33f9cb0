package airlock

import "strings"

// Markup a model obeys: chat-template turns and control tokens, role
// messages in JSON, role labels at the start of a line, and fake
// boundaries that pretend the report has ended ("--- END OF REPORT ---",
// "</user_input>", "BEGIN SYSTEM MESSAGE"). Bug reports quote and discuss
// such markup all the time ("the tokenizer prints <|im_start|> literally",
// a log line with "role": "system"), so the markup alone proves nothing:
// a rule fires only when the turn or the text after the boundary carries
// an order to the machine (orders below) or fires a family by itself.

// markupKind says how a markup rule reads the marker at its keyword.
type markupKind uint8

const (
	// mkChatToken: a template token ("<|im_start|>system", "<|system|>",
	// "<|start_header_id|>system<|end_header_id|>", "[INST]", "<<SYS>>",
	// "<start_of_turn>", and the closers "<|im_end|>", "[/INST]", ...).
	mkChatToken markupKind = iota + 1
	// mkRoleTag: an XML-like tag opening a privileged turn ("<system>",
	// "<admin>") or closing the reporter's data ("</report>").
	mkRoleTag
	// mkRoleJSON: a chat message object ("role": "system", "content": ...),
	// in double, single or escaped quotes.
	mkRoleJSON
	// mkRoleLine: a role label opening a line ("System:", "Human:",
	// "### Instruction:", "ADMIN NOTE:").
	mkRoleLine
	// mkBoundary: a fake end of the reporter's text ("end of report",
	// "[REPORT ENDS]").
	mkBoundary
	// mkPrivileged: the start of a privileged section ("BEGIN SYSTEM
	// MESSAGE", "SYSTEM OVERRIDE:"); what follows may also hand the model
	// an identity ("You are ...") or a rule ("You must ...").
	mkPrivileged
)

// maxTurn bounds the content read after a marker.
const maxTurn = 480

// markupFires reports whether the marker at f[start:end] opens content that
// carries orders or fires a family.
func (d *detector) markupFires(r *rule, f string, start, end int, checked *int) bool {
	if start < *checked {
		return false
	}
	var cs, ce int
	ok, user := false, false
	switch r.markup {
	case mkChatToken:
		cs, ce, ok = openChatToken(f, start)
	case mkRoleTag:
		cs, ce, ok = openRoleTag(f, start)
	case mkRoleJSON:
		cs, ce, ok, user = openRoleJSON(f, start, end)
	case mkRoleLine:
		labels := chatLabels
		if r.fam != famSystem {
			labels = authorityLabels
		}
		cs, ce, ok = openRoleLine(f, start, labels)
	case mkBoundary, mkPrivileged:
		if !standaloneMarker(f, start) {
			return false
		}
		m := r.re.FindStringIndex(f[start:min(len(f), start+prefixWindow)])
		if m != nil {
			cs = start + m[1]
			ce, ok = contentEnd(f, cs), true
		}
	}
	if !ok {
		return false
	}
	// Content read once is not read again from a marker inside it; a
	// marker that ends one turn and opens the next lies at its end.
	*checked = max(*checked, ce)
	content := f[cs:ce]
	// A user message in a chat export is the reporter's kind of text:
	// it counts only when it fires a family by itself.
	if !user && (ordersIn(content) || verdictFires(r, f, start, cs, content)) || r.markup == mkPrivileged && rulesIn(content) {
		return true
	}
	return scannable(content) && d.scan("\n"+content+"\n", 1)&^(famInvisible|famEncoded) != 0
}

// contentEnd returns where the content of a turn that starts at cs ends:
// at the next template token or closing tag, or maxTurn bytes on.
func contentEnd(f string, cs int) int {
	ce := min(len(f), cs+maxTurn)
	win := f[cs:ce]
	for _, stop := range turnStops {
		if i := strings.Index(win, stop); i >= 0 {
			win = win[:i]
		}
	}
	return cs + len(win)
}

var turnStops = []string{"<|", `\u003c|`, `\uooec|`, "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn>", "<end_of_turn>", "</"}

// openChatToken reads a template token at f[start:] with the role that
// follows it, and returns the span of the turn's content.
func openChatToken(f string, start int) (int, int, bool) {
	p := start
	switch {
	case strings.HasPrefix(f[p:], "<|") || escapedAt(f, p, escapedLT) > 0:
		name, q := tokenName(f, p)
		if q < 0 {
			return 0, 0, false
		}
		p = q
		switch name {
		case "im_start", "start":
			p = skipWord(f, p)
		case "start_header_id":
			i := strings.Index(f[p:min(len(f), p+40)], "<|end_header_id|>")
			if i < 0 {
				return 0, 0, false
			}
			p += i + len("<|end_header_id|>")
		}
		// Harmony-style headers: "<|channel|>analysis<|message|>".
		for n := 0; n < 3 && (strings.HasPrefix(f[p:], "<|") || escapedAt(f, p, escapedLT) > 0); n++ {
			name, q := tokenName(f, p)
			if q < 0 {
				break
			}
			p = q
			if name == "channel" || name == "constrain" {
				p = skipWord(f, p)
			}
		}
	case strings.HasPrefix(f[p:], "<start_of_turn>"):
		p = skipWord(f, p+len("<start_of_turn>"))
	default:
		for _, t := range []string{"[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<end_of_turn>"} {
			if strings.HasPrefix(f[p:], t) {
				p += len(t)
				break
			}
		}
		if p == start {
			return 0, 0, false
		}
	}
	return p, contentEnd(f, p), true
}

// tokenName reads "<|name|>" (or "<|name>") at f[p:] and returns the name
// and where the token ends, or -1.
func tokenName(f string, p int) (string, int) {
	// JSON escapes the brackets: "\u003c|im_start|\u003e".
	q := p + 2
	if n := escapedAt(f, p, escapedLT); n > 0 {
		q = p + n
	}
	from := q
	for q < len(f) && q-p < 26 && (f[q] >= 'a' && f[q] <= 'z' || f[q] == '_' || f[q] >= '0' && f[q] <= '9') {
		q++
	}
	name := f[from:q]
	if len(name) < 2 {
		return "", -1
	}
	switch {
	case strings.HasPrefix(f[q:], "|>"):
		return name, q + 2
	case strings.HasPrefix(f[q:], "|") && escapedAt(f, q+1, escapedGT) > 0:
		return name, q + 1 + escapedAt(f, q+1, escapedGT) - 1
	case strings.HasPrefix(f[q:], ">"):
		return name, q + 1
	}
	return "", -1
}

// skipWord skips spaces and one word (a role name) at f[p:].
func skipWord(f string, p int) int {
	for p < len(f) && (f[p] == ' ' || f[p] == '\n') {
		p++
	}
	for p < len(f) && (f[p] >= 'a' && f[p] <= 'z' || f[p] == '_') {
		p++
	}
	return p
}

// roleTagOpeners are the tags that open a privileged turn; dataClosers
// the closing tags that end the reporter's data, after which an attacker
// writes as if the prompt had taken over again.
var roleTagOpeners = setOf(`system system_prompt sys_prompt system_message system_instructions instructions
	admin admin_instructions admin_message administrator developer developer_instructions developer_message
	operator operator_instructions maintainer root sudo moderator security triage triage_policy policy
	override new_instructions assistant im_start`)

var dataClosers = setOf(`report user_report bug_report user user_input input ticket issue document data context
	untrusted untrusted_input untrusted_content untrusted_text external_content message user_message text content
	description query prompt customer feedback reporter submission email report_text report_body user_content
	user_text user_data`)

// openRoleTag reads a tag at f[start:] ("<system>", "</report>") and
// returns the span of the content it opens.
func openRoleTag(f string, start int) (int, int, bool) {
	p := start + 1
	closing := p < len(f) && f[p] == '/'
	if closing {
		p++
	}
	q := p
	for q < len(f) && q-p < 32 && (f[q] >= 'a' && f[q] <= 'z' || f[q] == '_' || f[q] == '-') {
		q++
	}
	name := strings.ReplaceAll(f[p:q], "-", "_")
	if closing && !dataClosers[name] || !closing && !roleTagOpeners[name] {
		return 0, 0, false
	}
	gt := strings.IndexByte(f[q:min(len(f), q+120)], '>')
	if gt < 0 || strings.ContainsAny(f[q:q+gt], "<\n") {
		return 0, 0, false
	}
	cs := q + gt + 1
	return cs, contentEnd(f, cs), true
}

// chatRoles are the roles of a chat message whose content a model takes
// as more than the reporter's words.
var chatRoles = setOf(`system developer assistant tool function model ipython admin operator user`)

// openRoleJSON reads a chat message object around "role" at f[start:end]
// and returns the span of its content and whether its role is the user's.
func openRoleJSON(f string, start, end int) (int, int, bool, bool) {
	cs, ce, role := roleJSON(f, start, end)
	return cs, ce, role != "", role == "user"
}

func roleJSON(f string, start, end int) (int, int, string) {
	// The key must be quoted: "role", 'role', \"role\".
	if start == 0 || !isQuote(f[start-1]) {
		return 0, 0, ""
	}
	p := end
	for p < len(f) && p-end < 8 && (f[p] == '"' || f[p] == '\'' || f[p] == '\\' || f[p] == ' ') {
		p++
	}
	if p >= len(f) || f[p] != ':' {
		return 0, 0, ""
	}
	p++
	for p < len(f) && p-end < 16 && (f[p] == '"' || f[p] == '\'' || f[p] == '\\' || f[p] == ' ') {
		p++
	}
	q := p
	for q < len(f) && f[q] >= 'a' && f[q] <= 'z' {
		q++
	}
	role := f[p:q]
	if !chatRoles[role] {
		return 0, 0, ""
	}
	// The content key follows the role, or precedes it in the same object.
	if cs := contentKey(f, q, min(len(f), q+160)); cs >= 0 {
		return cs, jsonContentEnd(f, cs), role
	}
	from := max(0, start-maxTurn)
	if open := strings.LastIndexByte(f[from:start], '{'); open >= 0 {
		if cs := contentKey(f, from+open, start); cs >= 0 {
			return cs, min(jsonContentEnd(f, cs), start), role
		}
	}
	return 0, 0, ""
}

// contentKey finds a quoted content key ("content", "text", "parts") in
// f[from:to] and returns where its value starts, or -1.
func contentKey(f string, from, to int) int {
	win := f[from:to]
	if i := strings.IndexByte(win, '}'); i >= 0 {
		win = win[:i]
	}
	for _, key := range []string{"content", "text", "parts", "message", "prompt"} {
		i := strings.Index(win, key)
		if i <= 0 || !isQuote(win[i-1]) {
			continue
		}
		p := from + i + len(key)
		for p < len(f) && p-from-i < 24 && strings.IndexByte(`"'\ :[{`, f[p]) >= 0 {
			p++
		}
		return p
	}
	return -1
}

// jsonContentEnd ends a message's content at the end of its object or at
// the next role key.
func jsonContentEnd(f string, cs int) int {
	ce := min(len(f), cs+maxTurn)
	win := f[cs:ce]
	if i := strings.IndexByte(win, '}'); i >= 0 {
		win = win[:i]
	}
	if i := strings.Index(win, "role"); i >= 0 {
		win = win[:i]
	}
	return cs + len(win)
}

// Role labels that open a chat turn, and labels that claim the authority
// of the people who run the machine.
var (
	chatLabels      = setOf(`system developer assistant human user sys instruction instructions ai bot model`)
	authorityLabels = setOf(`admin administrator operator maintainer maintainers moderator root owner staff security
		triage policy override priority important urgent notice note`)
)

// openRoleLine reads a role label at f[start:] (the rule has checked that
// it opens a line) and returns the span of the turn: the rest of the line
// and the lines up to a blank one.
func openRoleLine(f string, start int, labels map[string]bool) (int, int, bool) {
	p := start
	for p < len(f) && f[p] >= 'a' && f[p] <= 'z' {
		p++
	}
	if !labels[f[start:p]] {
		return 0, 0, false
	}
	end := p
	// "System prompt:", "ADMIN NOTE:", "[SYSTEM]:", "**System**:".
	for n := 0; n < 2; n++ {
		q := p
		for q < len(f) && (f[q] == ' ' || f[q] == '_' || f[q] == '-') {
			q++
		}
		r := q
		for r < len(f) && f[r] >= 'a' && f[r] <= 'z' {
			r++
		}
		if r == q || !roleLabelTails[f[q:r]] {
			break
		}
		p = r
	}
	for p < len(f) && p-end < 4 && strings.IndexByte(" *_])|", f[p]) >= 0 {
		p++
	}
	if p >= len(f) || f[p] != ':' {
		return 0, 0, false
	}
	cs := p + 1
	return cs, turnLinesEnd(f, cs), true
}

// turnLinesEnd returns where a turn opened by a role label ends: the rest
// of its line (or, when that is empty, from the next line on) and the
// lines after it up to a blank line or a line that opens another section
// ("### Steps", "Expected: ..."), within maxTurn bytes.
func turnLinesEnd(f string, cs int) int {
	limit := min(len(f), cs+maxTurn)
	i := cs
	for i < limit && (f[i] == ' ' || f[i] == '\n') {
		i++
	}
	for first := true; i < limit; first = false {
		if !first && (f[i] == '#' || f[i] == '\n' || sectionLabel(f[i:limit])) {
			return i
		}
		nl := strings.IndexByte(f[i:limit], '\n')
		if nl < 0 {
			return limit
		}
		i += nl + 1
	}
	return limit
}

// sectionLabel reports whether a line opens with a short label and a
// colon ("Steps:", "Expected result:").
func sectionLabel(line string) bool {
	for k := 0; k < len(line) && k < 24; k++ {
		c := line[k]
		switch {
		case c == ':':
			return k > 0
		case c >= 'a' && c <= 'z', c == ' ' && k > 0, c == '_', c == '-':
		default:
			return false
		}
	}
	return false
}

var roleLabelTails = setOf(`message prompt instruction instructions override note notes update notice team role
	input command commands directive order orders says mode`)

// ordersIn reports whether text gives the machine an order: a clause that
// opens with a verb aimed at the triage and release machinery or at the
// model's instructions ("Ignore the rules", "Approve and merge PR 881",
// "Set the severity to critical", "Close this ticket"), possibly after
// "please", "now" or "you must"; or a line that hands the model a new
// persona or task ("be evil", "from now on", "your new task is"). "You
// are now logged in" is what apps say, not an order.
// Generic chat instructions ("You are a helpful assistant", "Always answer
// politely") are not orders to this machine.
func ordersIn(text string) bool {
	if strings.Contains(text, "from now on") || strings.Contains(text, "your new ") {
		return true
	}
	var words [64]string
	var starts [64]bool
	n := 0
	clause := true
	for i := 0; i < len(text) && n < len(words); {
		c := text[i]
		if c >= 'a' && c <= 'z' || c == '\'' && n > 0 && i > 0 && isASCIIWordByte(text[i-1]) {
			j := i
			for j < len(text) && (text[j] >= 'a' && text[j] <= 'z' || text[j] == '\'' || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			words[n], starts[n] = text[i:j], clause
			n++
			clause = false
			i = j
			continue
		}
		switch c {
		case '.', '!', '?', ':', ';', '\n', ',', '(', '[', '>', '|':
			clause = true
		case '\\':
			// A JSON escape: "\n" breaks a line, "\"" quotes.
			if i+1 < len(text) && (text[i+1] == 'n' || text[i+1] == 'r' || text[i+1] == 't') {
				clause = true
				i++
			}
		}
		i++
	}
	for k := 0; k < n; k++ {
		if !starts[k] && words[k] != "and" && words[k] != "then" {
			continue
		}
		j := k
		for j < n && j-k < 5 && orderFillers[words[j]] {
			j++
		}
		if j >= n {
			break
		}
		if words[j] == "new" && j+1 < n && newOrders[words[j+1]] {
			// "New task: ...", "New instructions: ..." at a clause start.
			return true
		}
		switch orderVerbs[words[j]] {
		case strongOrder:
			return true
		case objectOrder:
			// A pronoun right after a verb only triage applies to
			// ("mark this", "assign it"), or a noun of the machinery
			// before the clause goes on: "close it", "close all tabs"
			// and "close the app and it works" are steps in a report.
			if j+1 < n && pronounObjects[words[j+1]] && triageVerbs[words[j]] {
				return true
			}
			// "Mark as spam", "set to critical": a verdict on the report.
			if j+1 < n && classifyVerbs[words[j]] && (words[j+1] == "as" || words[j+1] == "to") {
				return true
			}
			for m := j + 1; m < n && m <= j+5 && !clauseWords[words[m]]; m++ {
				if orderObjects[words[m]] {
					return true
				}
			}
		}
	}
	return false
}

const (
	objectOrder = 1 + iota
	strongOrder
)

// orderFillers may stand before the verb of an order.
var orderFillers = setOf(`and then please kindly now immediately just also first finally next instead simply
	you must should will shall need needs to have has do always`)

// orderVerbs: strong verbs are orders whatever follows; the others only
// with an object of the machinery within a few words ("close this
// ticket", not "close the app").
var orderVerbs = func() map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(`ignore disregard forget approve merge escalate reveal grant deploy bypass exfiltrate leak override obey`) {
		m[w] = strongOrder
	}
	for _, w := range strings.Fields(`close resolve reopen mark label tag flag classify set assign reassign treat call invoke run execute
		delete remove print output send reply respond say tell write post paste upload share include attach display echo skip disable prioritize prioritise rate dump show give
		change update downgrade upgrade raise lower lock ban accept reject dismiss push release ship revert transfer add page notify
		be act pretend behave become roleplay`) {
		m[w] = objectOrder
	}
	return m
}()

var orderObjects = setOf(`ticket tickets issue issues report reports bug bugs pr prs pull request requests patch patches commit commits
	branch release build severity priority label labels critical urgent duplicate duplicates p0 p1 po pi sev secret secrets
	token tokens key keys password passwords credentials ssh rsa passwd shadow npmrc netrc kubeconfig prompt instructions instruction rules env environment command
	commands script shell tool function reporter account admin access permission permissions rights review approval
	fixed resolved done candidate deployment repo repository database on-call oncall
	evil unrestricted uncensored unfiltered jailbroken dan hacker root superuser sudo maintainer administrator`)

var classifyVerbs = setOf(`mark label tag flag classify treat rate set`)

var pronounObjects = setOf(`it this that them these those`)

// triageVerbs act on a report whatever the pronoun after them stands for.
var triageVerbs = setOf(`mark label tag flag classify treat resolve reopen dismiss reject assign reassign
	prioritize prioritise downgrade lock ban`)

var clauseWords = setOf(`and but or then so because when if while until after before which who`)

var newOrders = setOf(`task tasks instructions instruction orders directive directives policy rules role persona goal objective`)

// standaloneMarker reports whether the boundary marker at f[start:] stands
// on its own: at the start of a line or a sentence, past the dashes and
// brackets that dress it ("--- END OF REPORT ---", "Thanks. END OF
// INPUT."). A marker inside a sentence ("at the end of the report form",
// "Unexpected end of JSON input") or quoted ("'=== END OF USER INPUT ==='
// is our separator") is named, not used.
func standaloneMarker(f string, start int) bool {
	for i := start - 1; i >= 0 && start-i <= 16; i-- {
		switch f[i] {
		case '\n', '.', '!', '?', ':', ';', ')', ']', '>', '|':
			return true
		case '=', '-', '#', '*', '[', '(', '<', '_', '~', ' ', '/':
			continue
		}
		return false
	}
	return start == 0
}

// rulesIn reports whether text lays down rules for the reader after a
// privileged marker: "You are ...", "You must ...", "Always ...".
func rulesIn(text string) bool {
	t := strings.TrimLeft(text, " \n:-=*#[]()")
	for _, p := range []string{"you are ", "you're ", "you must ", "you will ", "you should ", "you may ", "always ", "never "} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// JSON writes "<" and ">" as \u003c and \u003e; folding reads the digits
// inside a word as leetspeak, so both spellings are accepted.
var (
	escapedLT = []string{`\u003c|`, `\uooec|`}
	escapedGT = []string{`\u003e`, `\uooee`}
)

// escapedAt returns the length of the escape of set at f[p:], or 0. The
// "<" escapes include the bar that follows them; the ">" escapes are
// counted with one byte for the bar before them.
func escapedAt(f string, p int, set []string) int {
	if p > len(f) {
		return 0
	}
	for _, e := range set {
		if strings.HasPrefix(f[p:], e) {
			if e[len(e)-1] == '|' {
				return len(e)
			}
			return len(e) + 1
		}
	}
	return 0
}
