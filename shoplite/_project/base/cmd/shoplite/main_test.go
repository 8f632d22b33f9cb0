package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	newHandler(versionInfo{Commit: "0123abcd", Source: "ldflags"}).ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec
}

func TestServerVersion(t *testing.T) {
	rec := serve(t, "GET", "/version", "")
	var v versionInfo
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &v) != nil || v.Commit != "0123abcd" {
		t.Errorf("GET /version = %d %s; want the build commit", rec.Code, rec.Body)
	}
}

func TestServerHealthz(t *testing.T) {
	if rec := serve(t, "GET", "/healthz", ""); rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Errorf("GET /healthz = %d %q", rec.Code, rec.Body)
	}
}

func TestServerCheckout(t *testing.T) {
	rec := serve(t, "POST", "/checkout", `{"items":[{"sku":"mug","price_cents":1250,"quantity":2}]}`)
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"total_cents":2500}` {
		t.Errorf("POST /checkout = %d %s; want 2500", rec.Code, rec.Body)
	}
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"items":[{"sku":"mug","price_cents":100,"quantity":1}],"coupon":"NOPE"}`, http.StatusUnprocessableEntity},
		{`{"items":[{"sku":"mug","price_cents":-1,"quantity":1}]}`, http.StatusUnprocessableEntity},
		{`{"items":"not a list"}`, http.StatusBadRequest},
		{`{"unknown":1}`, http.StatusBadRequest},
	} {
		if rec := serve(t, "POST", "/checkout", tc.body); rec.Code != tc.code {
			t.Errorf("POST /checkout %s = %d, want %d", tc.body, rec.Code, tc.code)
		}
	}
	if rec := serve(t, "GET", "/checkout", ""); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET /checkout = %d, want 405", rec.Code)
	}
}
