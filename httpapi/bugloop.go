package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
)

// WithDesk serves the bug loop's routes with d. Without it they answer
// 503: the loop needs the git repository and the sandbox, not only the
// store.
func WithDesk(d *bugdesk.Desk) Option {
	return func(o *options) { o.desk = d }
}

func (s *server) needDesk() (*bugdesk.Desk, error) {
	if s.opts.desk == nil {
		return nil, signoff.Errorf(signoff.EUNAVAILABLE, "the bug desk is not running in this server")
	}
	return s.opts.desk, nil
}

func (s *server) getRepo(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	rs, err := s.store.GetRepoSettings(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

func (s *server) putRepo(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.RepoSettings
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	rs, err := s.store.SetRepoSettings(r.Context(), by, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

func (s *server) getLoop(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	if _, err := s.store.GetCase(r.Context(), by, r.PathValue("id")); err != nil {
		return err
	}
	l, err := s.store.GetLoop(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *server) startLoop(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	c, err := s.store.GetCase(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	if c.State != "ticketed" && c.State != "reopened" && c.State != "reproducing" {
		return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: reproduction starts from ticketed or reopened", c.ID, c.State)}
	}
	if err := d.StartReproduction(r.Context(), by.WorkspaceID, c.ID); err != nil {
		return err
	}
	c, err = s.store.GetCase(r.Context(), by, c.ID)
	if err != nil {
		return err
	}
	// The job drives the reproducer's task; starting only opens it.
	d.EnqueueJob(r.Context(), signoff.JobRequest{Args: signoff.ReproduceJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Version: c.Version}})
	writeJSON(w, http.StatusAccepted, c)
	return nil
}

type patchInput struct {
	Patch string `json:"patch"`
}

func (s *server) submitCandidate(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	var in patchInput
	if err := decodeJSONLimit(w, r, &in, 2<<20); err != nil {
		return err
	}
	cand, err := d.SubmitPatch(r.Context(), by, r.PathValue("id"), []byte(in.Patch))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, cand)
	return nil
}

// getCard serves the approval card of a bug case, or of a change case
// through the change desk.
func (s *server) getCard(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	if kind, err := s.caseKind(r, by); err != nil {
		return err
	} else if kind == signoff.KindChange {
		return s.getChangeCard(w, r, by)
	}
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	v, err := d.Card(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, v)
	return nil
}

type approvalInput struct {
	Envelope json.RawMessage `json:"envelope"`
	Via      string          `json:"via"`
	// Reason is required with a signed rejection.
	Reason string `json:"reason,omitempty"`
}

// approve records a signed approval of a bug case's candidate, or of a
// change case's plan through the change desk: the body is the same.
func (s *server) approve(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in approvalInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	// A passkey approval is given on the approval page, which also checks
	// the authenticator's signature counter (a cloned authenticator); the
	// API takes only signatures made on the approver's machine.
	if in.Via == approval.ViaWebPasskey {
		return signoff.Errorf(signoff.EINVALID, "passkey approvals are given on the approval page (/cases/%s/approval), not through the API", r.PathValue("id"))
	}
	if kind, err := s.caseKind(r, by); err != nil {
		return err
	} else if kind == signoff.KindChange {
		return s.approveChange(w, r, by, in)
	}
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	a, c, err := d.Approve(r.Context(), by, r.PathValue("id"), in.Envelope, in.Via, in.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"approval": a, "case": c})
	return nil
}

func (s *server) merge(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	m, err := d.Merge(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

type keyInput struct {
	PublicKey string `json:"public_key"`
}

func (s *server) registerKey(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in keyInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	k, err := s.store.RegisterKey(r.Context(), by, in.PublicKey)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, k)
	return nil
}

func (s *server) listKeys(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ks, err := s.store.ListKeys(r.Context(), by)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": ks})
	return nil
}

func (s *server) listDeployments(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ds, err := s.store.ListDeployments(r.Context(), by, r.PathValue("id"), 100)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deployments": ds})
	return nil
}

// maxWebhookBody bounds a deployment webhook.
const maxWebhookBody = 64 << 10

// deploymentHook takes a signed deployment webhook. The signature is the
// credential: no token, and every verification failure is 401.
func (s *server) deploymentHook(w http.ResponseWriter, r *http.Request) error {
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return signoff.Errorf(signoff.ETOOLARGE, "webhook body is larger than %d bytes", maxWebhookBody)
	} else if err != nil {
		return signoff.Errorf(signoff.EINVALID, "read body: %v", err)
	}
	dep, created, err := d.ReceiveWebhook(r.Context(), r.PathValue("id"), r.Header, body)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if !created {
		status = http.StatusOK // a repeated delivery: already recorded
	}
	writeJSON(w, status, map[string]any{"deployment": dep, "created": created})
	return nil
}

func (s *server) reporterDecision(w http.ResponseWriter, r *http.Request) error {
	if err := s.admitLink(w, r, r.PathValue("token"), true); err != nil {
		return err
	}
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	var in bugdesk.Answer
	if err := decodeJSONLimit(w, r, &in, maxReportBody); err != nil {
		return err
	}
	c, err := d.ReporterAnswer(r.Context(), r.PathValue("token"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"case_id": c.ID, "state": c.State})
	return nil
}

func (s *server) reverify(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	cand, err := d.Reverify(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, cand)
	return nil
}

// getEvidence serves a candidate's evidence bundle (a gzip'd tar) with
// its digest, which the loop record and the ledger also carry.
func (s *server) getEvidence(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	b, digest, err := s.store.GetEvidence(r.Context(), by, r.PathValue("id"), r.PathValue("candidate"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("X-Signoff-Bundle-Digest", digest)
	w.Header().Set("Content-Disposition", `attachment; filename="evidence-`+r.PathValue("candidate")+`.tar.gz"`)
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(b)
	if err != nil {
		s.log.DebugContext(r.Context(), "write evidence", "err", err)
	}
	return nil
}
