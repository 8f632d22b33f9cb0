package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/signoff-dev/signoff"
)

// getChangeEvidence serves a change case's evidence bundle: a gzip'd tar
// of the plan, its review, the policy, the approvals with their
// approvers' keys and the receipts with their health results, signed with
// the server's key (changedesk.Desk.ExportEvidence), for `signoff
// evidence verify` to check offline. The bundle is made on request, so
// its digest is sent with it (X-Signoff-Bundle-Digest, as for a
// candidate's bundle, and X-Bundle-Digest); what it proves rests on the
// signatures inside, not on that header. People read it; agents are
// refused by the desk.
func (s *server) getChangeEvidence(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	b, err := d.ExportEvidence(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:])
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("X-Signoff-Bundle-Digest", digest)
	w.Header().Set("X-Bundle-Digest", digest)
	// The desk checked the id's format, so it is safe in the header.
	w.Header().Set("Content-Disposition", `attachment; filename="evidence-`+r.PathValue("id")+`.tar.gz"`)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b); err != nil {
		s.log.DebugContext(r.Context(), "write change evidence", "err", err)
	}
	return nil
}
