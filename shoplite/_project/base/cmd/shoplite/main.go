// Command shoplite is ShopLite's HTTP server.
//
//	POST /checkout  {"items":[{"sku":"mug","price_cents":1250,"quantity":2}],"coupon":"SAVE10"}
//	                -> {"total_cents":2250}
//	GET  /version   -> {"commit":"<the commit it was built from>","source":"ldflags|vcs|unknown"}
//	GET  /healthz   -> ok
//
// With SHOPLITE_OFREP_URL set, checkout reads the boolean flag
// checkout_v2_new_payment_flow from a flag service over OFREP on every
// request (see flags.go); while it is true, checkout takes the new payment
// flow, whose provider is not live yet: POST /checkout answers 500
// {"error":"payment provider v2 unavailable"}.
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

// errPaymentV2 is the new payment flow's answer: its provider is not live.
var errPaymentV2 = errors.New("payment provider v2 unavailable")

// newHandler is the server without feature flags.
func newHandler(v versionInfo) http.Handler {
	return newHandlerWithFlags(v, nil)
}

// newHandlerWithFlags is the server; checkout, when not nil, is the flag
// evaluated on every checkout.
func newHandlerWithFlags(v versionInfo, checkout *checkoutFlag) http.Handler {
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
		if checkout != nil {
			v2, source := checkout.newPaymentFlow(r.Context())
			w.Header().Set("X-Flag-Source", source)
			if v2 {
				w.Header().Set("X-Payment-Flow", "v2")
				log.Printf("checkout: %s is on: %v", checkout.key, errPaymentV2)
				writeJSON(w, http.StatusInternalServerError, map[string]string{"error": errPaymentV2.Error()})
				return
			}
			w.Header().Set("X-Payment-Flow", "v1")
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
	checkout, err := checkoutFlagFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	v := buildVersion()
	srv := &http.Server{Handler: newHandlerWithFlags(v, checkout), ReadHeaderTimeout: 10 * time.Second}
	// The first line of output is the address, for whoever started us.
	fmt.Printf("shoplite %s listening on http://%s\n", v.Commit, ln.Addr())
	if checkout != nil {
		log.Printf("flags: checkout reads %s from %s over OFREP", checkout.key, checkout.client.base)
	}

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
