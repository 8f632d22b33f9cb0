package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/workflow"
)

// textView is one piece of reporter text.
type textView struct {
	Kind       string
	Dossier    string
	Original   string
	Contact    string
	Metadata   []metaView
	Created    time.Time
	Redactions int
	Suspected  bool
	Signals    []string
	Invisible  int
}

type metaView struct{ Key, Value string }

// ledgerStatus is the verification of the case's workspace chain.
type ledgerStatus struct {
	OK      bool
	Text    string
	Checked time.Time
	HeadSeq int64
}

// caseView is the case page.
type caseView struct {
	Case         signoff.Case
	Age          string
	Timeline     []eventView
	TimelineCut  bool
	Reports      []textView
	Owner        bool
	Ledger       ledgerStatus
	Approval     bool
	ChangeReason string
	// Bug and Change are the kind's own sections; nil for other kinds.
	Bug    *bugView
	Change *changeView
	// Decisions are the case's decisions, newest first.
	Decisions []decisionView
	// Waiting is who must act next and what; StateLabel the state in
	// plain words (the raw state shows on hover). ProjectName and
	// OpenerName name what the ids in Case stand for ("" when unknown).
	Waiting                             waitingView
	StateLabel, ProjectName, OpenerName string
}

// awaitingApproval reports whether c waits for a person's signed approval.
func awaitingApproval(c signoff.Case) bool {
	switch c.Kind {
	case signoff.KindBug:
		return c.State == workflow.BugAwaitingApproval
	case signoff.KindChange:
		return c.State == workflow.ChangeAwaitingApproval
	}
	return false
}

func (s *server) casePage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	c, err := s.store.GetCase(ctx, by, r.PathValue("id"))
	if err != nil {
		return notFoundCase(err)
	}
	v := caseView{Case: c, Age: age(s.o.Now(), c.CreatedAt), Owner: by.Role == signoff.RoleOwner, Approval: awaitingApproval(c)}
	if v.Timeline, v.TimelineCut, err = s.timeline(ctx, by, c); err != nil {
		return err
	}
	reps, err := s.store.ListReports(ctx, by, c.ID)
	if err != nil {
		return err
	}
	for _, rep := range reps {
		rv := textView{Kind: rep.Kind, Dossier: rep.Dossier.Text, Created: rep.CreatedAt, Redactions: len(rep.Dossier.Redactions),
			Suspected: rep.Dossier.InstructionSuspected, Signals: rep.Dossier.Signals, Invisible: rep.Dossier.RemovedInvisible}
		if by.Role == signoff.RoleOwner {
			rv.Original, rv.Contact = rep.Original, rep.Contact
		}
		for k, val := range rep.Metadata {
			rv.Metadata = append(rv.Metadata, metaView{k, val})
		}
		sort.Slice(rv.Metadata, func(i, j int) bool { return rv.Metadata[i].Key < rv.Metadata[j].Key })
		v.Reports = append(v.Reports, rv)
	}
	switch c.Kind {
	case signoff.KindChange:
		if l, err := s.store.GetChangeLoop(ctx, by, c.ID); err == nil {
			v.ChangeReason = l.State.Reason
		}
		if v.Change, err = s.changeSection(ctx, by, c); err != nil {
			return fmt.Errorf("change section of %s: %w", c.ID, err)
		}
	case signoff.KindBug:
		if v.Bug, err = s.bugSection(ctx, by, c); err != nil {
			return fmt.Errorf("bug section of %s: %w", c.ID, err)
		}
	}
	if v.Decisions, err = s.decisions(ctx, by, c); err != nil {
		return fmt.Errorf("decisions of %s: %w", c.ID, err)
	}
	v.Ledger = s.ledgerStatus(ctx, c.WorkspaceID)
	v.Waiting = s.waitingOn(s.withWaitingURL(r), by, c)
	v.StateLabel = v.Waiting.Label
	v.ProjectName, v.OpenerName = s.caseNames(ctx, c)
	me := by
	s.render(w, r, http.StatusOK, "case", page{Title: c.Title, Me: &me, CSRF: sess.CSRF, Body: v})
	return nil
}

// caseNames reads the names of the case's project and opener. A name that
// cannot be read is left out: the page then shows the id alone.
func (s *server) caseNames(ctx context.Context, c signoff.Case) (project, opener string) {
	if p, err := s.store.GetProject(ctx, c.WorkspaceID, c.ProjectID); err == nil {
		project = p.Name
	}
	if c.CreatedBy != "" {
		if a, err := s.store.GetActor(ctx, c.WorkspaceID, c.CreatedBy); err == nil {
			opener = a.Name
		}
	}
	return project, opener
}

// notFoundCase words a missing case (or another workspace's) for people.
func notFoundCase(err error) error {
	if signoff.ErrorCode(err) == signoff.ENOTFOUND || signoff.ErrorCode(err) == signoff.EINVALID {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such case in your workspace.")
	}
	return err
}

// verifyCache remembers each workspace's last verification. A chain is
// verified again when its head has moved, at most once per verifyEvery,
// so that a busy desk does not re-read the whole ledger on every page.
type verifyCache struct {
	mu sync.Mutex
	m  map[string]ledgerStatus
	// running are the verifications under way: a page that needs one
	// already running waits for it instead of reading the chain again.
	running map[string]chan struct{}
}

const verifyEvery = 5 * time.Second

func (s *server) ledgerStatus(ctx context.Context, ws string) ledgerStatus {
	head, err := s.store.HeadSeq(ctx, ws)
	if err != nil {
		s.log.ErrorContext(ctx, "ledger head", "err", err)
		return ledgerStatus{Text: "The ledger could not be read, so it is not verified."}
	}
	s.verify.mu.Lock()
	for {
		prev, ok := s.verify.m[ws]
		if ok && (prev.HeadSeq == head || s.o.Now().Sub(prev.Checked) < verifyEvery) {
			s.verify.mu.Unlock()
			return prev
		}
		wait, busy := s.verify.running[ws]
		if !busy {
			break
		}
		s.verify.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ledgerStatus{Text: "The ledger could not be verified just now."}
		}
		s.verify.mu.Lock()
		if _, again := s.verify.running[ws]; !again {
			if prev, ok := s.verify.m[ws]; ok {
				// What the verification that just ended found, even if
				// the head has moved on since: it is seconds old.
				s.verify.mu.Unlock()
				return prev
			}
		}
	}
	if s.verify.running == nil {
		s.verify.running = map[string]chan struct{}{}
	}
	done := make(chan struct{})
	s.verify.running[ws] = done
	s.verify.mu.Unlock()
	defer func() {
		s.verify.mu.Lock()
		delete(s.verify.running, ws)
		s.verify.mu.Unlock()
		close(done)
	}()
	now := s.o.Now()
	st := ledgerStatus{Checked: now, HeadSeq: head}
	switch {
	case s.trusted == nil:
		st.Text = "Not verified: this server has no ledger key to check signatures with."
	default:
		res, err := s.store.VerifyLedger(ctx, ws, s.trusted)
		var f *ledger.Failure
		switch {
		case err == nil:
			st.OK = true
			st.HeadSeq = res.HeadSeq
			st.Text = fmt.Sprintf("The workspace ledger verifies: %d events, hash chain and signed head intact (head seq %d).", res.Events, res.HeadSeq)
		case errors.As(err, &f):
			st.Text = fmt.Sprintf("The workspace ledger does NOT verify: broken at seq %d: %s.", f.Seq, f.Reason)
		default:
			s.log.ErrorContext(ctx, "verify ledger", "err", err)
			st.Text = "The ledger could not be verified just now."
			return st // not cached: try again next time
		}
	}
	s.verify.mu.Lock()
	if s.verify.m == nil {
		s.verify.m = map[string]ledgerStatus{}
	}
	s.verify.m[ws] = st
	s.verify.mu.Unlock()
	return st
}
