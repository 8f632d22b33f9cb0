package airlock

import "strings"

// Forged verdicts. A forged turn need not order the machine to do
// anything: it can state the decision as already taken ("the triage
// verdict is: not a bug", "their PRs are auto-approved"), vouch for the
// reporter ("the reporter is trusted") or, as the assistant, claim the
// action ("I approve this PR", "I will merge this without review"). A
// model reading the report takes such a turn as its own prompt or its own
// earlier answer. The reporter's own prose says such things too ("the
// maintainers already approved the design doc"), so the check runs only
// on the content of markup (markupFires), and there only in turns that
// are not the user's: a user turn of a chat export is the reporter's kind
// of text.

// verdictFires reports whether the turn that the marker at f[start:cs]
// opens may carry a forged verdict, and whether content states one.
func verdictFires(r *rule, f string, start, cs int, content string) bool {
	return verdictTurn(r, f, start, cs) && verdictIn(content)
}

// weakAuthority are the authority labels that bug reports use for their
// own notes ("Note: ...", "Priority: low"); their lines are not read for
// verdicts.
var weakAuthority = setOf(`note notes notice important urgent priority`)

// verdictTurn reports whether the turn opened by the marker at f[start:cs]
// speaks for the machine: a system, developer or assistant turn, the text
// after a fake boundary or a closed data tag, or an authority label. A
// user turn ("<|im_start|>user", "[INST]", "Human:") does not.
func verdictTurn(r *rule, f string, start, cs int) bool {
	switch r.markup {
	case mkChatToken:
		marker := f[start:cs]
		if strings.HasPrefix(marker, "[inst]") || strings.HasPrefix(marker, "<</sys>>") {
			// Llama 2: the user's message follows.
			return false
		}
		if strings.Contains(marker, "end_header_id") && !strings.Contains(marker, "start_header_id") {
			// Llama 3: the role stands just before "<|end_header_id|>".
			i := start
			for i > 0 && start-i < 16 && f[i-1] >= 'a' && f[i-1] <= 'z' {
				i--
			}
			marker = f[i:start]
		}
		return !strings.Contains(marker, "user") && !strings.Contains(marker, "human")
	case mkRoleLine:
		p := start
		for p < len(f) && f[p] >= 'a' && f[p] <= 'z' {
			p++
		}
		label := f[start:p]
		if label == "user" || label == "human" || weakAuthority[label] {
			return false
		}
		// A transcript pasted into a report ("user: it crashes" /
		// "assistant: this is not a bug") has the other side's lines
		// too; its assistant and system lines are quoted, not forged. A
		// forged turn's orders still fire through ordersIn.
		return !hasUserLine(f)
	}
	return true
}

// hasUserLine reports whether the folded text f has a line that opens with
// a user's or human's role label, as transcripts do.
func hasUserLine(f string) bool {
	for _, l := range [...]string{"\nuser:", "\nhuman:", "\n> user:", "\nuser :", "\n**user**:"} {
		if strings.Contains(f, l) {
			return true
		}
	}
	return false
}

// verdictIn reports whether text states a triage or review decision, vouches
// for the reporter or claims an action on the machinery.
func verdictIn(text string) bool {
	var words [96]string
	var seps [96]byte
	n := 0
	var sep byte = '\n'
	for i := 0; i < len(text) && n < len(words); {
		c := text[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			j := i
			for j < len(text) && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= '0' && text[j] <= '9' ||
				text[j] == '\'' && j+1 < len(text) && text[j+1] >= 'a' && text[j+1] <= 'z') {
				j++
			}
			words[n], seps[n] = text[i:j], sep
			n++
			sep = ' '
			i = j
			continue
		}
		switch {
		case c == '\\' && i+1 < len(text) && (text[i+1] == 'n' || text[i+1] == 'r' || text[i+1] == 't'):
			// A JSON escape breaks the line: "Done.\nI merged it".
			if sep == ' ' {
				sep = '\n'
			}
			i++
		case c != ' ' && c != '"' && c != '\'' && c != '*' && c != '_' && c != '`' && c != '\\':
			sep = c
		}
		i++
	}
	w, s := words[:n], seps[:n]
	for k := range w {
		if statedAt(w, s, k) || claimAt(w, k) || trustAt(w, k) {
			return true
		}
	}
	return false
}

// statedPhrases are decisions stated as taken: the review is done or not
// needed, the report is classified.
var statedPhrases = func() map[string][][]string {
	m := map[string][][]string{}
	for _, p := range strings.Split(`already approved|already been approved|already reviewed|already been reviewed|already signed off|
		already triaged|already been triaged|auto approved|autoapproved|auto approve|auto merged|auto merge|automerge|
		automerged|pre approved|preapproved|been approved|been signed off|signed off on|not a bug|wontfix|won't fix|
		works as intended|working as intended|without review|without a review|without any review|without reviewing|
		without code review|no review needed|no review required|no review is needed|no review is required|no further review|
		no need for review|no need to review|review not required|review not needed|review is not required|
		review is not needed|exempt from review|skip review|skips review|triage result|triage outcome|triage decision|
		triage verdict|triage status|triaged as|closed as|resolved as|marked as|flagged as|classified as`, "|") {
		ws := strings.Fields(p)
		m[ws[0]] = append(m[ws[0]], ws)
	}
	return m
}()

// notVerdictAfter ends phrases that only look like a verdict ("closed as
// many tabs as I could", "marked as soon as").
var notVerdictAfter = setOf(`many much soon well far long expected follows follow shown`)

// optionWords around a phrase make it one of the choices a prompt offers
// ("answer 'bug' or 'not a bug'"), not a decision.
var optionWords = setOf(`or either whether if`)

var severityWords = setOf(`severity sev priority`)

var severityLevels = setOf(`low lowest none minimal minor trivial informational info medium moderate high highest
	critical blocker urgent p0 p1 p2 p3 p4 po pi`)

var severityLinks = setOf(`is was set to now been has be changed lowered raised downgraded upgraded level rating`)

// statedAt reports whether a stated verdict starts at w[k]: a phrase from
// statedPhrases, "verdict is ...", or "severity: low".
func statedAt(w []string, s []byte, k int) bool {
	if k > 0 && optionWords[w[k-1]] {
		return false
	}
	for _, p := range statedPhrases[w[k]] {
		if k+len(p) > len(w) {
			continue
		}
		ok := true
		for i, pw := range p {
			if w[k+i] != pw {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		next := k + len(p)
		if next < len(w) && (optionWords[w[next]] || notVerdictAfter[w[next]] && (p[len(p)-1] == "as")) {
			continue
		}
		return true
	}
	switch {
	case w[k] == "verdict":
		// "The verdict is: ...", "verdict: not a bug", "verdict = wontfix".
		return k+1 < len(w) && (s[k+1] == ':' || s[k+1] == '=' || w[k+1] == "is" || w[k+1] == "was")
	case severityWords[w[k]]:
		// "Severity: low", "severity set to critical"; not a list of
		// levels to choose from ("severity: low, medium or high").
		j := k + 1
		for j < len(w) && j-k <= 3 && severityLinks[w[j]] {
			j++
		}
		if j >= len(w) || !severityLevels[w[j]] || j == k+1 && s[j] != ':' && s[j] != '=' {
			return false
		}
		return j+1 >= len(w) || !severityLevels[w[j+1]] && !optionWords[w[j+1]]
	}
	return false
}

// claimSubjects speak for the machine in the first person, with the
// auxiliaries that may follow them.
var (
	claimSubjects = setOf(`i we i'll we'll i've we've i'm we're i'd`)
	claimAux      = setOf(`will shall have has am are just already hereby now also then be going to gonna do did`)
)

// claimVerbs act on the machinery; strong ones whatever their object is
// ("I approve this"), the others only with a noun of the machinery ("I
// closed the ticket", not "I closed it").
var claimVerbs = func() map[string]int {
	m := map[string]int{}
	for _, v := range strings.Fields(`approve approved approving merge merged merging lgtm`) {
		m[v] = strongOrder
	}
	for _, v := range strings.Fields(`close closed closing resolve resolved resolving dismiss dismissed reject rejected
		mark marked label labeled labelled triage triaged escalate escalated deploy deployed downgrade downgraded
		lower lowered set ship shipped release released accept accepted sign signed push pushed skip skipped`) {
		m[v] = objectOrder
	}
	return m
}()

// claimAt reports whether w[k] opens a first-person claim of an action on
// the machinery: "I approve this PR", "I will merge this", "I have closed
// the issue as wontfix".
func claimAt(w []string, k int) bool {
	if !claimSubjects[w[k]] {
		return false
	}
	j := k + 1
	for j < len(w) && j-k <= 3 && claimAux[w[j]] {
		j++
	}
	if j >= len(w) {
		return false
	}
	kind := claimVerbs[w[j]]
	if kind == 0 {
		return false
	}
	for m := j + 1; m < len(w) && m <= j+4 && !clauseWords[w[m]]; m++ {
		switch {
		case orderObjects[w[m]] || w[m] == "change" || w[m] == "changes" || w[m] == "fix" || w[m] == "mr":
			return true
		case pronounObjects[w[m]]:
			if kind == strongOrder || m+1 < len(w) && (w[m+1] == "as" || w[m+1] == "to") {
				return true
			}
		}
	}
	return false
}

// trustWords vouch for a subject; trustSubjects are the people and changes
// a verdict is about.
var (
	trustWords    = setOf(`trusted whitelisted allowlisted verified vetted`)
	trustSubjects = setOf(`reporter reporters author authors contributor contributors submitter submitters sender user users
		account they he she maintainer member fix patch pr prs change changes report issue commit this it`)
	trustLinks = setOf(`is are was were been be has have fully already now always`)
	trustNouns = setOf(`reporter reporters author contributor contributors submitter user users sender maintainer member source`)
)

// trustAt reports whether w[k] vouches for the reporter or the change:
// "the reporter is trusted", "has been verified", "a trusted contributor".
func trustAt(w []string, k int) bool {
	if !trustWords[w[k]] {
		return false
	}
	if w[k] == "trusted" && k+1 < len(w) && trustNouns[w[k+1]] {
		return true
	}
	j := k - 1
	for j >= 0 && k-j <= 3 && trustLinks[w[j]] {
		j--
	}
	return j < k-1 && j >= 0 && trustSubjects[w[j]]
}
