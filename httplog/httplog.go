// Package httplog holds what the API server and the web UI share to log
// and count the requests they answer.
package httplog

import "net/http"

// Method is the request method for logs and metric labels: a standard
// method as is, anything else "other", so that client-chosen text stays
// out of both.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// StatusWriter remembers the status a handler answered with.
type StatusWriter struct {
	http.ResponseWriter
	// Status is the status written, 0 while nothing is.
	Status int
}

func (w *StatusWriter) WriteHeader(status int) {
	if w.Status == 0 {
		w.Status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Code is the status the client got: 200 when the handler wrote nothing.
func (w *StatusWriter) Code() int {
	if w.Status == 0 {
		return http.StatusOK
	}
	return w.Status
}
