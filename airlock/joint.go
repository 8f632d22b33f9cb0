package airlock

import (
	"slices"
	"strings"
)

// SignalSplit is raised, beside the families it found, when an instruction
// appears only once the fields of one submission are read together: text
// "Please", steps "1. ignore all previous", device "instructions". Each
// field alone says nothing; the reader of the whole form reads an order.
const SignalSplit = "split-across-fields"

// fieldSeparator joins fields for the joint scan: one space, as a reader
// runs from one field to the next. A field's own line breaks are kept, so
// an instruction that opens a line inside a field still does; the detector
// folds words spelled letter by letter across single spaces, which a line
// break would cut (measured on the labelled corpus, TestEvalJoint: 137 of
// 137 injections cut into four fields are found with a space, 134 with a
// line break).
const fieldSeparator = " "

// DetectJoint returns the sorted signal families that fire on the fields of
// one submission read apart and read together, in the order given (the
// form's order, or the order a reader is shown them). When reading them
// together fires a family no field fires alone, SignalSplit is added.
// Empty fields are skipped. Like Detect it is pure and never panics.
func DetectJoint(fields ...string) []string {
	var apart []string
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			apart = union(apart, Detect(f))
		}
	}
	return JoinSignals(apart, DetectTogether(fields...))
}

// DetectTogether returns the signal families that fire on the non-empty
// fields joined in the order given, or nil for fewer than two of them. A
// caller that already scanned each field (Sanitize does) adds only this,
// with JoinSignals.
func DetectTogether(fields ...string) []string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			parts = append(parts, f)
		}
	}
	if len(parts) < 2 {
		return nil
	}
	return Detect(strings.Join(parts, fieldSeparator))
}

// JoinSignals returns the sorted union of the signals the fields raised
// apart and together, with SignalSplit when together raised a family that
// apart did not.
func JoinSignals(apart, together []string) []string {
	out := union(slices.Clone(apart), together)
	for _, s := range together {
		if s != SignalSplit && !slices.Contains(apart, s) {
			return union(out, []string{SignalSplit})
		}
	}
	return out
}

// union returns the sorted union of two signal lists, without duplicates.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	slices.Sort(a)
	return a
}

// MergeSignals returns d with signals added (sorted, without duplicates)
// and InstructionSuspected set when any signal stands.
func MergeSignals(d Dossier, signals []string) Dossier {
	d.Signals = union(slices.Clone(d.Signals), signals)
	if d.Signals == nil {
		d.Signals = []string{}
	}
	d.InstructionSuspected = len(d.Signals) > 0
	return d
}

// KnownSignal reports whether s names a signal the airlock raises. Signals
// recorded earlier (on a report, in a task) travel as strings; only the
// names the airlock itself uses are shown again to a model.
func KnownSignal(s string) bool {
	if s == SignalSplit {
		return true
	}
	for _, f := range familyNames {
		if f.name == s {
			return true
		}
	}
	return false
}
