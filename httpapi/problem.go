package httpapi

import (
	"errors"
	"net/http"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

// problemBase prefixes every problem type; the code makes the type a stable,
// documented identifier instead of a free-form string.
const problemBase = "https://signoff.dev/problems/"

// Problem is an RFC 9457 problem details body. Code repeats the last part of
// Type so that clients can switch on it without parsing a URL.
type Problem struct {
	Type         string `json:"type"`
	Title        string `json:"title"`
	Status       int    `json:"status"`
	Detail       string `json:"detail"`
	Code         string `json:"code"`
	Instance     string `json:"instance"`
	RequestID    string `json:"request_id"`
	CurrentState string `json:"current_state,omitempty"`
	// Check names the gate check that refused a change (one of
	// change.GateChecks: "consumed", "before_state", ...); Drifted is set
	// when the refusal was drift, which moved the case to drifted.
	Check   string `json:"check,omitempty"`
	Drifted bool   `json:"drifted,omitempty"`
}

// fail answers err as a problem. Domain errors take their status from
// signoff.Mapping; anything that is not a domain error is logged in full and
// shown to the caller only as "internal error".
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := signoff.Mapping(err).HTTPStatus, signoff.ErrorCode(err)
	detail, state := signoff.ErrorMessage(err), signoff.ErrorState(err)
	if code == signoff.EINTERNAL {
		s.log.ErrorContext(r.Context(), "internal error", "err", err, "request_id", infoFrom(r.Context()).id)
	}
	if code == signoff.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	p := Problem{
		Type:         problemBase + code,
		Title:        http.StatusText(status),
		Status:       status,
		Detail:       detail,
		Code:         code,
		Instance:     r.URL.EscapedPath(),
		RequestID:    infoFrom(r.Context()).id,
		CurrentState: state,
	}
	if ge, ok := errors.AsType[*change.GateError](err); ok && code != signoff.EINTERNAL {
		p.Check, p.Drifted = ge.Check, ge.Drifted
	}
	writeProblem(w, p)
}

func writeProblem(w http.ResponseWriter, p Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	writeBody(w, p.Status, p)
}
