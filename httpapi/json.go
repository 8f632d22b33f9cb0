package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// maxBody bounds every request body. Nothing the API accepts comes close;
// the limit keeps a client from making the server buffer arbitrary data.
const maxBody = 1 << 20

// writeJSON answers v as application/json with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	writeBody(w, status, v)
}

func writeBody(w http.ResponseWriter, status int, v any) {
	w.WriteHeader(status)
	// Encoding our own types cannot fail, so an error here is the client
	// going away; the status is already sent and there is no one to tell.
	_ = json.NewEncoder(w).Encode(v)
}

// decodeJSON reads the body of a POST, PUT or PATCH into v, which must be a
// pointer to a struct. It is strict so that a typo in a field name or a
// second JSON value is an error the client sees rather than data silently
// ignored: the media type must be JSON, the body at most maxBody bytes, and
// it must hold exactly one JSON object with only known fields of the right
// types.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return decodeJSONLimit(w, r, v, maxBody)
}

// decodeJSONLimit is decodeJSON with a body limit of its own.
func decodeJSONLimit(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	if err := checkJSONType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return signoff.Errorf(signoff.ETOOLARGE, "request body is larger than %d bytes", tooLarge.Limit)
	} else if err != nil {
		return signoff.Errorf(signoff.EINVALID, "could not read the request body")
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return signoff.Errorf(signoff.EINVALID, "request body is empty; expected a JSON object")
	}
	if body[0] != '{' {
		return signoff.Errorf(signoff.EINVALID, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return signoff.Errorf(signoff.EINVALID, "unexpected data after the JSON object at byte %d", dec.InputOffset())
	}
	// encoding/json matches field names case-insensitively and lets a
	// repeated key win silently; the API takes neither. The canonical
	// parser refuses duplicate keys (and invalid UTF-8) and exactKeys
	// demands exact names.
	if _, err := canonical.Transform(body); err != nil {
		return signoff.Errorf(signoff.EINVALID, "invalid JSON: %v", err)
	}
	return exactKeys(body, v)
}

// checkJSONType accepts application/json with at most a UTF-8 charset: JSON
// exchanged between systems is UTF-8 (RFC 8259), so any other charset or
// media type is refused rather than guessed at.
func checkJSONType(ct string) error {
	refuse := signoff.Errorf(signoff.EMEDIATYPE, "Content-Type must be application/json")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return refuse
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return refuse
		}
	}
	return nil
}

// jsonError turns a decoding error into a message that names the problem,
// and the field where there is one.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return signoff.Errorf(signoff.EINVALID, "malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return signoff.Errorf(signoff.EINVALID, "malformed JSON: the body ends early")
	case errors.As(err, &typ) && typ.Field != "":
		return signoff.Errorf(signoff.EINVALID, "field %q must be %s, not %s", typ.Field, kindName(typ.Type), typ.Value)
	case errors.As(err, &typ):
		return signoff.Errorf(signoff.EINVALID, "request body must be a JSON object")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return signoff.Errorf(signoff.EINVALID, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return signoff.Errorf(signoff.EINVALID, "invalid JSON body")
}

// kindName says what JSON a Go type expects, in words a client understands.
func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return fmt.Sprintf("of type %s", t)
}

// exactKeys refuses top-level keys that are not spelled exactly as one of
// v's JSON field names.
func exactKeys(body []byte, v any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return jsonError(err)
	}
	known := fieldNames(reflect.TypeOf(v))
	for k := range fields {
		if !known[k] {
			return signoff.Errorf(signoff.EINVALID, "unknown field %q", k)
		}
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> map[string]bool

// fieldNames returns the JSON names of a struct type's exported fields.
func fieldNames(t reflect.Type) map[string]bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		m[name] = true
	}
	fieldCache.Store(t, m)
	return m
}
