package httplog

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestMethod(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"GET": "GET", "DELETE": "DELETE", "get": "other", "BREW\n": "other", "": "other"} {
		if got := Method(in); got != want {
			t.Errorf("Method(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusWriter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		h    func(w http.ResponseWriter)
		want int
	}{
		{"nothing written", func(http.ResponseWriter) {}, http.StatusOK},
		{"body only", func(w http.ResponseWriter) { w.Write([]byte("x")) }, http.StatusOK},
		{"status", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) }, http.StatusTeapot},
		{"first status wins", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sw := &StatusWriter{ResponseWriter: httptest.NewRecorder()}
			tt.h(sw)
			if sw.Code() != tt.want {
				t.Errorf("Code() = %d, want %d", sw.Code(), tt.want)
			}
			if http.NewResponseController(sw).Flush() != nil {
				t.Error("the controller does not reach the recorder")
			}
		})
	}
}
