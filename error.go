// Package signoff holds the domain types, service interfaces and the single
// application error type shared by every other package.
package signoff

import (
	"errors"
	"fmt"
)

// Error codes. Every domain error carries exactly one of these; transports map
// them to HTTP status, CLI exit code and MCP error code through Codes below and
// nowhere else.
const (
	EINVALID      = "invalid"                // input failed validation
	ENOTFOUND     = "not_found"              // missing, or belongs to another workspace
	ECONFLICT     = "conflict"               // wrong state, stale version or lost race
	EUNAUTHORIZED = "unauthorized"           // no credential or an unknown one
	EFORBIDDEN    = "forbidden"              // known credential, not allowed
	ETOOLARGE     = "too_large"              // request body over the limit
	EMETHOD       = "method_not_allowed"     // a transport refused the method
	EMEDIATYPE    = "unsupported_media_type" // a transport refused the body's type
	ERATELIMIT    = "rate_limited"           // too many requests; retry later
	EUNAVAILABLE  = "unavailable"            // a dependency is not ready
	EINTERNAL     = "internal"               // anything else; details are only logged
)

// CodeMapping is how one error code surfaces on each transport.
type CodeMapping struct {
	HTTPStatus int
	ExitCode   int
	MCPCode    int // JSON-RPC error code
}

// Codes is the one place where error codes meet transports.
var Codes = map[string]CodeMapping{
	EINVALID:      {HTTPStatus: 422, ExitCode: 2, MCPCode: -32602},
	ENOTFOUND:     {HTTPStatus: 404, ExitCode: 3, MCPCode: -32002},
	ECONFLICT:     {HTTPStatus: 409, ExitCode: 4, MCPCode: -32003},
	EUNAUTHORIZED: {HTTPStatus: 401, ExitCode: 5, MCPCode: -32001},
	EFORBIDDEN:    {HTTPStatus: 403, ExitCode: 6, MCPCode: -32004},
	ETOOLARGE:     {HTTPStatus: 413, ExitCode: 2, MCPCode: -32602},
	EMETHOD:       {HTTPStatus: 405, ExitCode: 2, MCPCode: -32601},
	EMEDIATYPE:    {HTTPStatus: 415, ExitCode: 2, MCPCode: -32602},
	ERATELIMIT:    {HTTPStatus: 429, ExitCode: 7, MCPCode: -32005},
	EUNAVAILABLE:  {HTTPStatus: 503, ExitCode: 7, MCPCode: -32603},
	EINTERNAL:     {HTTPStatus: 500, ExitCode: 1, MCPCode: -32603},
}

// Error is the application error. Its Message is safe to show to the caller;
// anything that is not an *Error is internal and is only logged.
type Error struct {
	Code    string
	Message string
	// State is the current state of the case when a transition was refused
	// because of it (ECONFLICT), so the caller can re-read and decide.
	State string
}

func (e *Error) Error() string {
	return fmt.Sprintf("signoff error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err: the *Error's message, or
// a generic text for internal errors so that no detail leaks.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorState returns the case state carried by a conflict error, if any.
func ErrorState(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.State
	}
	return ""
}

// Mapping returns the transport mapping for err's code.
func Mapping(err error) CodeMapping {
	if m, ok := Codes[ErrorCode(err)]; ok {
		return m
	}
	return Codes[EINTERNAL]
}
