package triage

import (
	"os"
	"strings"
	"testing"
)

// TestComponentDebug logs every component's points for the items named
// in COMPONENT_DEBUG ("dir:item,item"); it skips without it.
func TestComponentDebug(t *testing.T) {
	spec := os.Getenv("COMPONENT_DEBUG")
	if spec == "" {
		t.Skip("COMPONENT_DEBUG not set")
	}
	dir, ids, _ := strings.Cut(spec, ":")
	d, err := LoadDataset(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	p := NewProject(d)
	for _, it := range d.Items {
		if !strings.Contains(","+ids+",", ","+it.ID+",") {
			continue
		}
		in := Classify(it)
		q := Query{Text: it.Text, Device: in.Device, OS: in.OS, AppVersion: in.AppVersion}
		crashes := p.Crash.Query(q)
		q.Signature = ConfirmedSignature(crashes)
		dec := ReportComponentOf(p.Components, q, crashes)
		t.Logf("%s -> %s (%.2f)\n  %s", it.ID, dec.Component, dec.Confidence, strings.Join(dec.whys, "\n  "))
	}
}
