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
// without a session, like the sign-in page that shows the notice too; to
// anyone not signed in, both show the heading only (notice).
const noticePath = "/desk/notice"

// notice is the notice to show on r's page, or nil. Its Text (a build's
// progress, or the error it failed with, which may name paths and
// settings of the host) is for signed-in people only: anyone else gets
// the heading.
func (s *server) notice(r *http.Request) *Notice {
	if s.o.Notice == nil || public(r) {
		return nil
	}
	n, ok := s.o.Notice()
	if !ok {
		return nil
	}
	if _, _, signedIn := s.session(r); !signedIn {
		n = Notice{Heading: n.Heading, Failed: n.Failed, Ready: n.Ready}
	}
	return &n
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
