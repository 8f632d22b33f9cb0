package bugdesk

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
)

// TestSmokeFollowsNoRedirect: a live service (or code deployed to it)
// that answers a smoke check with a redirect does not send the server's
// request elsewhere: the check judges the redirect itself, and the body
// at the other end (say the cloud's metadata endpoint) never reaches the
// detail the ledger records. A metadata address is never dialled.
func TestSmokeFollowsNoRedirect(t *testing.T) {
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"AccessKeyId":"ASIASECRET","SecretAccessKey":"hunter2"}`))
	}))
	defer secret.Close()
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, secret.URL+"/latest/meta-data/iam/security-credentials/app", http.StatusFound)
	}))
	defer live.Close()
	d := &Desk{}
	res, ok := d.smoke(context.Background(), live.URL, []signoff.SmokeCheck{{Name: "checkout", Path: "/checkout", ExpectStatus: 200, ExpectBody: "total"}})
	if ok || len(res) != 1 || res[0].Status != http.StatusFound || strings.Contains(res[0].Detail, "SECRET") || strings.Contains(res[0].Detail, "hunter2") {
		t.Fatalf("smoke followed the redirect: %+v", res)
	}
	res, ok = d.smoke(context.Background(), "http://169.254.169.254", []signoff.SmokeCheck{{Name: "imds", Path: "/latest/meta-data/"}})
	if ok || !strings.Contains(res[0].Detail, "metadata") {
		t.Fatalf("smoke dialled the metadata address: %+v", res)
	}
}
