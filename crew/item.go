package crew

import (
	"slices"

	"github.com/signoff-dev/signoff/airlock"
	"github.com/signoff-dev/signoff/triage"
)

// throughAirlock passes every free-text field of an item through the
// airlock (the author of a support e-mail is as personal as the text) and
// records on it the signals its fields raise, read apart and together in
// the form's order: text, steps, device, OS, app version. An instruction
// cut across fields fires there, and every prompt that shows the item
// names it.
func throughAirlock(it triage.Item) triage.Item {
	clean := func(s string) string {
		if s == "" {
			return ""
		}
		return airlock.Sanitize(s).Text
	}
	it.Text, it.Author = clean(it.Text), clean(it.Author)
	it.Metadata = triage.Metadata{Device: clean(it.Metadata.Device), OS: clean(it.Metadata.OS), AppVersion: clean(it.Metadata.AppVersion)}
	steps := make([]string, 0, len(it.Steps))
	for _, s := range it.Steps {
		if s = clean(s); s != "" {
			steps = append(steps, s)
		}
	}
	it.Steps = slices.Clip(steps)
	if len(it.Steps) == 0 {
		it.Steps = nil
	}
	fields := append([]string{it.Text}, it.Steps...)
	fields = append(fields, it.Metadata.Device, it.Metadata.OS, it.Metadata.AppVersion)
	signals := airlock.DetectJoint(fields...)
	for _, s := range it.Signals {
		if airlock.KnownSignal(s) && !slices.Contains(signals, s) {
			signals = append(signals, s)
		}
	}
	slices.Sort(signals)
	it.Signals = signals
	return it
}

// withFormFacts sets in an intake record what the report's own form
// fields say, which the server knows better than a model: the device, OS
// and app version the reporter gave win over the record's (a model cannot
// move a report to another version to dodge the regression guard), the
// record fills what the form left out, and the form's steps come first,
// then the recorded ones it did not give.
func withFormFacts(in triage.Intake, it triage.Item) triage.Intake {
	form := triage.Classify(triage.Item{Metadata: it.Metadata, Steps: it.Steps})
	in.Device = firstNonEmpty(form.Device, in.Device)
	in.OS = firstNonEmpty(form.OS, in.OS)
	in.AppVersion = firstNonEmpty(form.AppVersion, in.AppVersion)
	in.Steps = triage.MergeSteps(it.Steps, in.Steps)
	return in
}
