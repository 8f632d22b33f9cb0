package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// ---- The flag store for people and agents ----
//
// Everyone but reporters reads flags; the owner declares new ones and
// issues each environment's OFREP key. No route changes a flag's value:
// flag changes go through change requests, and the gate applies them.

// flagView is a flag with its state digest, the value a change plan's
// before_state_digest names.
type flagView struct {
	signoff.Flag
	StateDigest string `json:"state_digest"`
}

func viewFlag(f signoff.Flag) (flagView, error) {
	d, err := signoff.FlagState(f)
	if err != nil {
		return flagView{}, fmt.Errorf("state digest of flag %s: %w", f.Key, err)
	}
	return flagView{Flag: f, StateDigest: d}, nil
}

func (s *server) listFlags(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "env")
	if err != nil {
		return err
	}
	flags, err := s.store.ListFlags(r.Context(), by, r.PathValue("id"), q["env"])
	if err != nil {
		return err
	}
	out := make([]flagView, 0, len(flags))
	for _, f := range flags {
		v, err := viewFlag(f)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"flags": out})
	return nil
}

func (s *server) getFlag(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	f, err := s.store.GetFlag(r.Context(), by, r.PathValue("id"), r.PathValue("env"), r.PathValue("key"))
	if err != nil {
		return err
	}
	v, err := viewFlag(f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// flagDeclaration is the body of POST /api/v1/projects/{id}/flags.
type flagDeclaration struct {
	Environment string           `json:"environment"`
	Key         string           `json:"key"`
	Type        signoff.FlagType `json:"type"`
	Value       json.RawMessage  `json:"value"`
}

func (s *server) declareFlag(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in flagDeclaration
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	f, err := s.store.CreateFlag(r.Context(), by, r.PathValue("id"), in.Environment, in.Key, in.Type, in.Value)
	if err != nil {
		return err
	}
	v, err := viewFlag(f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// flagKeyInput is the body of POST /api/v1/projects/{id}/flag-keys.
type flagKeyInput struct {
	Environment string `json:"environment"`
	Label       string `json:"label"`
}

type createdFlagKey struct {
	FlagKey signoff.FlagKey `json:"flag_key"`
	// Secret is the OFREP API key, shown this once.
	Secret string `json:"secret"`
}

func (s *server) createFlagKey(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in flagKeyInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	k, secret, err := s.store.CreateFlagKey(r.Context(), by, r.PathValue("id"), in.Environment, in.Label)
	if err != nil {
		return err
	}
	// Every API response is already no-store; this one says so itself
	// because it holds the secret, the one time it is ever shown.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, createdFlagKey{FlagKey: k, Secret: secret})
	return nil
}

func (s *server) listFlagKeys(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "env")
	if err != nil {
		return err
	}
	keys, err := s.store.ListFlagKeys(r.Context(), by, r.PathValue("id"), q["env"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"flag_keys": keys})
	return nil
}

func (s *server) revokeFlagKey(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	k, err := s.store.RevokeFlagKey(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// ---- OFREP ----
//
// The OpenFeature Remote Evaluation Protocol (OFREP, open-feature/protocol)
// lets any OpenFeature SDK read the flag store through its generic OFREP
// provider:
//
//	POST /ofrep/v1/evaluate/flags/{key}   one flag (server-side providers)
//	POST /ofrep/v1/evaluate/flags         every flag of the environment (client-side providers)
//
// The credential is an environment's flag key ("sof_…", see
// signoff.FlagService.CreateFlagKey) in X-API-Key or as
// "Authorization: Bearer". X-API-Key wins when both are sent, so an API
// token in Authorization neither helps nor hurts. The key names the project
// and the environment; it reads every flag of that environment and nothing
// else. A missing, malformed, unknown or revoked key is 401; 403 is never
// sent, since nothing a valid key can ask for is forbidden to it.
//
// The body is {"context": {...}}, or empty. The evaluation context is
// checked (it must be a JSON object) and then ignored: there is no
// targeting yet, so every evaluation is the flag's one stored value with
// reason STATIC. Other top-level members are ignored, as the protocol
// grows. Errors use OFREP's shapes, not problem details: 400 with
// PARSE_ERROR or INVALID_CONTEXT, 404 with FLAG_NOT_FOUND,
// {"errorDetails": ...} otherwise.
//
// Evaluation is not rate limited: it is the hot path of every app that
// uses flags, and a bad key costs one indexed lookup, as a bad API token
// does on the API.

// maxOFREPBody bounds an evaluation request: an evaluation context is a
// handful of attributes.
const maxOFREPBody = 64 << 10

// OFREP error codes (OpenFeature's error codes).
const (
	ofrepParseError     = "PARSE_ERROR"
	ofrepInvalidContext = "INVALID_CONTEXT"
	ofrepFlagNotFound   = "FLAG_NOT_FOUND"
)

// ofrepEvaluation is one successful evaluation.
type ofrepEvaluation struct {
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value"`
	Reason   string          `json:"reason"`
	Variant  string          `json:"variant"`
	Metadata struct{}        `json:"metadata"`
}

// ofrepFailure is an evaluation error (400 and 404; key is left out of a
// bulk request's 400) and, with errorDetails alone, every other error.
type ofrepFailure struct {
	Key          string `json:"key,omitempty"`
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorDetails string `json:"errorDetails"`
}

// evaluate answers f as OFREP does: its value, reason STATIC (no
// targeting), and the value's string form as the variant ("on" or "off"
// for booleans, the string itself, the number or the object as canonical
// JSON writes it).
func evaluate(f signoff.Flag) ofrepEvaluation {
	variant := string(f.Value)
	switch f.Type {
	case signoff.FlagBoolean:
		variant = "off"
		if string(f.Value) == "true" {
			variant = "on"
		}
	case signoff.FlagString:
		var v string
		if json.Unmarshal(f.Value, &v) == nil {
			variant = v
		}
	}
	return ofrepEvaluation{Key: f.Key, Value: f.Value, Reason: "STATIC", Variant: variant}
}

// ofrepError is an answer in OFREP's error shape.
type ofrepError struct {
	status int
	body   ofrepFailure
}

func (e *ofrepError) Error() string { return e.body.ErrorDetails }

func ofrepErrorf(status int, code, format string, args ...any) *ofrepError {
	return &ofrepError{status: status, body: ofrepFailure{ErrorCode: code, ErrorDetails: fmt.Sprintf(format, args...)}}
}

// ofrepFail writes err in OFREP's shape: an *ofrepError as it is, a
// domain error by its status with its message, anything else as a logged
// 500 that says no more than "internal error".
func (s *server) ofrepFail(w http.ResponseWriter, r *http.Request, err error) {
	var oe *ofrepError
	if !errors.As(err, &oe) {
		if signoff.ErrorCode(err) == signoff.EINTERNAL {
			s.log.ErrorContext(r.Context(), "internal error", "err", err, "request_id", infoFrom(r.Context()).id)
		}
		oe = &ofrepError{status: signoff.Mapping(err).HTTPStatus, body: ofrepFailure{ErrorDetails: signoff.ErrorMessage(err)}}
	}
	if oe.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeJSON(w, oe.status, oe.body)
}

var errNoFlagKey = signoff.Errorf(signoff.EUNAUTHORIZED, "a flag key is required: X-API-Key: sof_… or Authorization: Bearer sof_…")

// flagCredential resolves the request's flag key to the project and the
// environment it reads.
func (s *server) flagCredential(r *http.Request) (ws, projectID, env string, err error) {
	var secret string
	if vals := r.Header.Values("X-API-Key"); len(vals) > 0 {
		if len(vals) != 1 {
			return "", "", "", errNoFlagKey
		}
		secret = strings.TrimSpace(vals[0])
	} else {
		vals := r.Header.Values("Authorization")
		if len(vals) != 1 {
			return "", "", "", errNoFlagKey
		}
		scheme, rest, ok := strings.Cut(vals[0], " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", "", "", errNoFlagKey
		}
		secret = strings.TrimSpace(rest)
	}
	if secret == "" {
		return "", "", "", errNoFlagKey
	}
	return s.store.ResolveFlagKey(r.Context(), secret)
}

// readOFREPRequest checks the evaluation request body: empty, or a JSON
// object whose context, when present, is an object (null counts as no
// context). The context itself is not used yet.
func readOFREPRequest(w http.ResponseWriter, r *http.Request) *ofrepError {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxOFREPBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return ofrepErrorf(http.StatusBadRequest, ofrepParseError, "the request body is larger than %d bytes", maxOFREPBody)
	} else if err != nil {
		return ofrepErrorf(http.StatusBadRequest, ofrepParseError, "could not read the request body")
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if checkJSONType(r.Header.Get("Content-Type")) != nil {
		return ofrepErrorf(http.StatusBadRequest, ofrepParseError, "Content-Type must be application/json")
	}
	// The canonical parser refuses what encoding/json would guess at:
	// duplicate keys, invalid UTF-8, trailing data.
	if _, err := canonical.Transform(body); err != nil {
		return ofrepErrorf(http.StatusBadRequest, ofrepParseError, "the request body is not valid JSON: %v", err)
	}
	if body[0] != '{' {
		return ofrepErrorf(http.StatusBadRequest, ofrepParseError, `the request body must be a JSON object such as {"context": {}}`)
	}
	var in struct {
		Context json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return ofrepErrorf(http.StatusBadRequest, ofrepParseError, "the request body is not valid JSON")
	}
	if c := bytes.TrimSpace(in.Context); len(c) > 0 && string(c) != "null" && c[0] != '{' {
		return ofrepErrorf(http.StatusBadRequest, ofrepInvalidContext, "context must be a JSON object")
	}
	return nil
}

// ofrepEvaluate is POST /ofrep/v1/evaluate/flags/{key}. It answers every
// error itself, in OFREP's shape.
func (s *server) ofrepEvaluate(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	ws, projectID, env, err := s.flagCredential(r)
	if err != nil {
		s.ofrepFail(w, r, err)
		return nil
	}
	if oe := readOFREPRequest(w, r); oe != nil {
		oe.body.Key = key
		s.ofrepFail(w, r, oe)
		return nil
	}
	f, err := s.store.GetFlag(r.Context(), signoff.SystemActor(ws), projectID, env, key)
	if code := signoff.ErrorCode(err); code == signoff.ENOTFOUND || code == signoff.EINVALID {
		// A key that is not a valid flag key names no flag either.
		oe := ofrepErrorf(http.StatusNotFound, ofrepFlagNotFound, "flag %q is not defined in environment %s", key, env)
		oe.body.Key = key
		s.ofrepFail(w, r, oe)
		return nil
	} else if err != nil {
		s.ofrepFail(w, r, err)
		return nil
	}
	writeJSON(w, http.StatusOK, evaluate(f))
	return nil
}

// ofrepBulk is POST /ofrep/v1/evaluate/flags: every flag of the key's
// environment, with an ETag of the environment's state. A request whose
// If-None-Match names it is answered 304 without a body.
func (s *server) ofrepBulk(w http.ResponseWriter, r *http.Request) error {
	ws, projectID, env, err := s.flagCredential(r)
	if err != nil {
		s.ofrepFail(w, r, err)
		return nil
	}
	if oe := readOFREPRequest(w, r); oe != nil {
		s.ofrepFail(w, r, oe)
		return nil
	}
	flags, err := s.store.ListFlags(r.Context(), signoff.SystemActor(ws), projectID, env)
	if err != nil {
		s.ofrepFail(w, r, err)
		return nil
	}
	tag, err := environmentETag(projectID, env, flags)
	if err != nil {
		s.ofrepFail(w, r, err)
		return nil
	}
	w.Header().Set("ETag", tag)
	if etagMatches(r.Header.Values("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	out := make([]ofrepEvaluation, len(flags))
	for i, f := range flags {
		out[i] = evaluate(f)
	}
	writeJSON(w, http.StatusOK, map[string]any{"flags": out})
	return nil
}

// environmentETag is a strong entity tag of an environment's state: the
// SHA-256 over the project, the environment and the state digest of every
// flag in it (in the store's order). Any write moves a flag's version and
// so the tag; so does a new flag.
func environmentETag(projectID, env string, flags []signoff.Flag) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", projectID, env)
	for _, f := range flags {
		d, err := signoff.FlagState(f)
		if err != nil {
			return "", fmt.Errorf("state digest of flag %s: %w", f.Key, err)
		}
		fmt.Fprintf(h, "%s\n", d)
	}
	return `"` + hex.EncodeToString(h.Sum(nil)) + `"`, nil
}

// etagMatches applies If-None-Match (RFC 9110, 13.1.2): "*" or any listed
// tag that matches by weak comparison.
func etagMatches(headers []string, tag string) bool {
	for _, h := range headers {
		for _, t := range strings.Split(h, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == tag {
				return true
			}
		}
	}
	return false
}
