package triage_test

import (
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// A different bug of the same feature that names a harm the open ticket
// does not (money taken, secrets printed, data gone) is never merged into
// it: a duplicate has no severity and no gate, so the harm would vanish.
// A blocked ticket that would have been STRONG is linked as possibly
// related in the investigation (the new ticket's body).
func TestHarmBlocksDuplicate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		set, text, device, os, ver, ticket string
		linked                             bool
	}{
		{"bank", "Card controls: I used the 'Freeze card' switch, it shows frozen, but my card was still charged twice by a merchant after I froze it. Freeze card does not block payments.", "Pixel 8", "Android 15", "7.12.0", "QMB-207", true},
		{"devtool", "Secret values are not masked in job logs when the secret is a single line that contains a dollar sign; my AWS key is printed in clear text in the job log.", "", "Linux", "3.9.1", "KH-209", true},
		{"fitness", "Firmware OTA stalls at 99% and then the watch rolls back... and after the rollback all my workout history and sleep data is gone from the watch and the app.", "Galaxy Watch", "Android 15", "5.8.1", "HP-209", false},
		{"devtool", "Scheduled triggers run twice on the night the clocks change (DST): the cron expression fires at 02:30 two times.", "", "Linux", "3.9.1", "KH-211", true},
		{"shop", "Google Pay: the payment sheet shows the wrong total for baskets with a voucher applied, it charges the amount before the discount.", "Pixel 8", "Android 15", "5.19.0", "PLM-418", true},
	} {
		d, err := triage.LoadDataset(os.DirFS("testdata/eval/" + c.set))
		if err != nil {
			t.Fatal(err)
		}
		r := triage.NewProject(d).NewSession().Process(triage.Item{ID: "H", Source: "in_app_form", ReceivedAt: "2026-10-20T10:00:00Z", Text: c.text,
			Metadata: triage.Metadata{Device: c.device, OS: c.os, AppVersion: c.ver}})
		if r.Result.Outcome == triage.OutcomeDuplicate {
			t.Errorf("%s: merged into %s", c.text[:40], r.Result.DuplicateOf)
		}
		for _, h := range r.TrackerHits {
			if h.ID == c.ticket && h.Score >= triage.StrongScore-0.03 {
				t.Errorf("%s: %s scores %.3f, within the calibration margin of the floor (%s)", c.text[:40], h.ID, h.Score, strings.Join(h.Why, "; "))
			}
		}
		if c.linked && (r.Investigation == nil || !strings.Contains(r.Investigation.Rationale, "possibly related: "+c.ticket)) {
			t.Errorf("%s: %s not linked as possibly related", c.text[:40], c.ticket)
		}
	}
}
