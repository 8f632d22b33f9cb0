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

// fieldSeparator joins fields for the joint scan. A line break ends no
// phrase the detector looks for (a word sequence may run over it), so an
// instruction cut at field edges is read whole; it does end a line, so a
// field cannot glue itself onto the last word of the one before.
const fieldSeparator = "\n"

// DetectJoint returns the sorted signal families that fire on the fields of
// one submission read apart and read together, in the order given (the
// form's order, or the order a reader is shown them). When reading them
// together fires a family no field fires alone, SignalSplit is added.
// Empty fields are skipped. Like Detect it is pure and never panics.
func DetectJoint(fields ...string) []string {
	var apart []string
	var parts []string
	for _, f := range fields {
		if strings.TrimSpace(f) == "" {
			continue
		}
		parts = append(parts, f)
		apart = union(apart, Detect(f))
	}
	if len(parts) < 2 {
		return apart
	}
	together := Detect(strings.Join(parts, fieldSeparator))
	out := union(apart, together)
	for _, s := range together {
		if !slices.Contains(apart, s) {
			out = union(out, []string{SignalSplit})
			break
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
