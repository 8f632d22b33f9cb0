// Command shoplite is ShopLite's HTTP server.
//
//	POST /checkout  {"items":[{"sku":"mug","price_cents":1250,"quantity":2}],"coupon":"SAVE10"}
//	                -> {"total_cents":2250}
//	GET  /version   -> {"commit":"<the commit it was built from>","source":"ldflags|vcs|unknown"}
//	GET  /healthz   -> ok
//
// Build with -ldflags "-X main.commit=$(git rev-parse HEAD)"; without it
// /version falls back to the VCS revision the go command stamped, which it
// does only with -buildvcs enabled and where .git is a directory (not in a
// git worktree).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"shoplite/cart"
)

// commit is set with -ldflags "-X main.commit=...".
var commit = ""

// versionInfo is what GET /version returns.
type versionInfo struct {
	Commit   string `json:"commit"`
	Source   string `json:"source"`
	Modified bool   `json:"modified,omitempty"`
}

func buildVersion() versionInfo {
	if commit != "" {
		return versionInfo{Commit: commit, Source: "ldflags"}
	}
	v := versionInfo{Commit: "unknown", Source: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit, v.Source = s.Value, "vcs"
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

type checkoutRequest struct {
	Items  []cart.Item `json:"items"`
	Coupon string      `json:"coupon"`
}

type checkoutResponse struct {
	TotalCents int64 `json:"total_cents"`
}

func newHandler(v versionInfo) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, v)
	})
	mux.HandleFunc("POST /checkout", func(w http.ResponseWriter, r *http.Request) {
		var req checkoutRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request: " + err.Error()})
			return
		}
		total, err := cart.Total(req.Items, req.Coupon)
		if err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, cart.ErrUnknownCoupon) || errors.Is(err, cart.ErrInvalidItem) {
				status = http.StatusUnprocessableEntity
			}
			writeJSON(w, status, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, checkoutResponse{TotalCents: total})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	v := buildVersion()
	srv := &http.Server{Handler: newHandler(v), ReadHeaderTimeout: 10 * time.Second}
	// The first line of output is the address, for whoever started us.
	fmt.Printf("shoplite %s listening on http://%s\n", v.Commit, ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		log.Fatal(err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Fatal(err)
	}
}
