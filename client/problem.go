package client

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/signoff-dev/signoff"
)

// Problem is an answer outside 2xx: the server's RFC 9457 problem details
// when it sent them, and always the HTTP status. Find it with errors.As.
// It unwraps to a *signoff.Error whose code follows the HTTP status, so
// that signoff.ErrorCode and signoff.Mapping see the same error the server
// had.
type Problem struct {
	// Status is the HTTP status of the answer (not the body's claim). The
	// other fields are what the server, or anything between, wrote: decide
	// on Status or signoff.ErrorCode(err), show the rest.
	Status       int    `json:"status"`
	Type         string `json:"type"`
	Title        string `json:"title"`
	Detail       string `json:"detail"`
	Code         string `json:"code"`
	Instance     string `json:"instance"`
	RequestID    string `json:"request_id"`
	CurrentState string `json:"current_state,omitempty"`
	// Check names the change gate check that refused an execution;
	// Drifted is set when that refusal was drift.
	Check   string `json:"check,omitempty"`
	Drifted bool   `json:"drifted,omitempty"`
}

// decodeProblem reads an error answer. A body that is not a problem still
// gives a *Problem with its status, and a generic detail.
func decodeProblem(status int, contentType string, body []byte) *Problem {
	var p Problem
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/problem+json" || mt == "application/json" {
		_ = json.Unmarshal(body, &p) // a body that is not a problem still has a status
	}
	p.Status = status
	return &p
}

// Error is what the CLI shows: the detail, the status, the request id and
// the case's state when the server named it.
func (p *Problem) Error() string {
	detail := strings.TrimSpace(p.Detail)
	if detail == "" {
		detail = "the server refused the request"
		if p.Status >= 300 && p.Status < 400 {
			detail = "the server answered with a redirect, which is not followed: check --server"
		}
	}
	msg := fmt.Sprintf("%s (HTTP %d %s", detail, p.Status, http.StatusText(p.Status))
	if p.RequestID != "" {
		msg += ", request " + p.RequestID
	}
	msg += ")"
	if p.CurrentState != "" {
		msg += "; the case is " + p.CurrentState
	}
	return msg
}

// Unwrap gives the problem as a domain error: its code follows the HTTP
// status (so a CLI's exit code does too) and its message is Error's.
func (p *Problem) Unwrap() error {
	return &signoff.Error{Code: statusCode(p.Status), Message: p.Error(), State: p.CurrentState}
}

// statusCode maps an HTTP status back to an error code.
func statusCode(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return signoff.EUNAUTHORIZED
	case http.StatusForbidden:
		return signoff.EFORBIDDEN
	case http.StatusNotFound:
		return signoff.ENOTFOUND
	case http.StatusConflict:
		return signoff.ECONFLICT
	case http.StatusUnprocessableEntity, http.StatusBadRequest:
		return signoff.EINVALID
	case http.StatusRequestEntityTooLarge:
		return signoff.ETOOLARGE
	case http.StatusTooManyRequests:
		return signoff.ERATELIMIT
	}
	return signoff.EUNAVAILABLE
}
