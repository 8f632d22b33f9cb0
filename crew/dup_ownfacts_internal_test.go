package crew

import (
	"os"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// The report's own query (the duplicate claim's re-score) takes device, OS
// and version from the item, never from the model's record_intake: a model
// could choose a platform and version that confirm a crash signature and
// lift an unrelated ticket over the floor.
func TestOwnQueryIgnoresModelIntake(t *testing.T) {
	t.Parallel()
	d, err := triage.LoadDataset(os.DirFS("../triage/testdata/eval/devtool"))
	if err != nil {
		t.Fatal(err)
	}
	p := &project{Project: triage.NewProject(d)}
	for _, tc := range []struct {
		name, text       string
		meta             triage.Metadata
		wantDev, wantVer string
	}{
		{"bare form, model picks a platform", "The desktop app crashes when I open the settings window.", triage.Metadata{}, "", ""},
		{"text names its version", "Since 3.9.1 the desktop app crashes when I open the settings window.", triage.Metadata{}, "", "3.9.1"},
		{"form wins", "The desktop app crashes when I open the settings window.", triage.Metadata{Device: "ThinkPad X1", AppVersion: "3.8.0"}, "ThinkPad X1", "3.8.0"},
	} {
		st := State{Item: triage.Item{ID: "X", Text: tc.text, Metadata: tc.meta},
			Intake: &triage.Intake{Category: triage.CategoryBug, Device: "MacBook Pro M3", OS: "macOS 14.6", AppVersion: "3.9.0"}}
		q := ownQuery(p, st)
		if q.Device != tc.wantDev || q.AppVersion != tc.wantVer || q.OS == "macOS 14.6" {
			t.Errorf("%s: own query device %q os %q version %q, want %q, not the model's, %q", tc.name, q.Device, q.OS, q.AppVersion, tc.wantDev, tc.wantVer)
		}
	}
}
