package web

import (
	"encoding/json"
	"net/http"
)

// Notice is a note the server shows at the top of its staff pages (sign-in,
// the desk, case pages; never the reporters' public pages): the demo's
// "ShopLite is being built", say. Options.Notice supplies it.
type Notice struct {
	// Heading is the note in a few words; Text says more (what is under
	// way, what is left).
	Heading string `json:"heading"`
	Text    string `json:"text"`
	// Failed marks a note about something that went wrong: it is shown as
	// an alert, and the page stops asking for news.
	Failed bool `json:"failed,omitempty"`
	// Ready is what the page says once the note is gone ("ShopLite is
	// ready"), before the person reloads it.
	Ready string `json:"ready,omitempty"`
}

// noticePath answers the current notice as JSON, or 204 when there is
// none, for the script of a page that shows one (notice.js). It is open
// without a session, like the sign-in page that shows the notice too.
const noticePath = "/desk/notice"

// notice is the notice to show on r's page, or nil.
func (s *server) notice(r *http.Request) *Notice {
	if s.o.Notice == nil || public(r) {
		return nil
	}
	if n, ok := s.o.Notice(); ok {
		return &n
	}
	return nil
}

func (s *server) serveNotice(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	n := s.notice(r)
	if n == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(n)
}
