package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// resumeCommands are the moves that send a bug back to triage from where
// it waits for people: information a member of staff now has (relayed
// from the reporter, or found), or a case a person took over. The store
// queues the triage job with the move.
var resumeCommands = map[string]string{
	workflow.BugNeedsInfo:  "provide_info",
	workflow.BugNeedsHuman: "resume_triage",
}

// resumeCommand is the command the case page's "Resume triage" button
// sends for a viewer of role, or "" when the page offers none: the
// transition table decides who may, never the page. A case that triage
// already ticketed is not offered it from needs_human: its work is past
// triage.
func resumeCommand(c signoff.Case, role signoff.Role, ticketed bool) string {
	cmd := resumeCommands[c.State]
	if c.Kind != signoff.KindBug || cmd == "" || (c.State == workflow.BugNeedsHuman && ticketed) {
		return ""
	}
	if _, err := workflow.Bug.Next(c.State, cmd, role, workflow.Facts{FixAttempts: c.FixAttempts, MaxFixAttempts: c.MaxFixAttempts}); err != nil {
		return ""
	}
	return cmd
}

// resumeTriage sends a bug back to triage from the case page, on the
// version the page showed.
func (s *server) resumeTriage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	caseID := r.PathValue("id")
	c, err := s.store.GetCase(ctx, by, caseID)
	if err != nil {
		return notFoundCase(err)
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	if len(note) > maxWebNote {
		return signoff.Errorf(signoff.EINVALID, "The note is too long (at most %d characters).", maxWebNote)
	}
	version, err := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "The form carries no case version: reload the page and try again.")
	}
	cmd := resumeCommands[c.State]
	if cmd == "" {
		return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("The case is %s: only a case that needs information or a person goes back to triage from here.", c.State)}
	}
	if _, _, err := s.store.TransitionCase(ctx, by, caseID, signoff.TransitionInput{Command: cmd, ExpectedVersion: &version, Note: note}); err != nil {
		return fmt.Errorf("resume triage of %s: %w", caseID, err)
	}
	http.Redirect(w, r, "/cases/"+caseID, http.StatusSeeOther)
	return nil
}
