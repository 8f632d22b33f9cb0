package triage_test

import (
	"fmt"

	"github.com/signoff-dev/signoff/triage"
)

// A model may only claim a duplicate it saw, and only a STRONG one.
func ExampleCheckDuplicate() {
	seen := []triage.Hit{{ID: "AB-7", Score: 0.91, Strong: true}, {ID: "AB-3", Score: 0.45}}
	fmt.Println(triage.CheckDuplicate("AB-7", seen))
	fmt.Println(triage.CheckDuplicate("AB-3", seen))
	fmt.Println(triage.CheckDuplicate("AB-99", seen))
	// Output:
	// <nil>
	// refused: AB-3 scored 0.45 in this item's search results, below the 0.52 a duplicate needs (it is a weak match); cite a STRONG hit (AB-7 0.91) or change the verdict to new
	// refused: you never saw AB-99 in this item's search results; cite a STRONG hit (AB-7 0.91) or change the verdict to new
}

// Intake reads the category and the facts of a report in any of the
// lexicon's languages.
func ExampleClassify() {
	in := triage.Classify(triage.Item{Text: "La aplicación se cierra cuando abro el carrito. Samsung A54, Android 14, versión 3.2.0."})
	fmt.Println(in.Category, in.Language, in.Device, in.OS, in.AppVersion)
	// Output: bug es Samsung A54 Android 14 3.2.0
}

func ExampleCompareVersions() {
	fmt.Println(triage.CompareVersions("2.10", "2.9"), triage.CompareVersions("v2.4", "2.4.0"), triage.CompareVersions("2.5.0-beta", "2.5.0"))
	// Output: 1 0 -1
}
