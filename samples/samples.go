// Package samples embeds the sample data the demo and the tests use: a
// triage dataset in the orbit_run layout (fifteen feedback items with a
// tracker, crash log, releases, CODEOWNERS and the expected outcomes; MIT
// licence, see orbit_run/SOURCE.md).
package samples

import (
	"embed"
	"io/fs"
)

//go:embed orbit_run
var orbitRun embed.FS

// TriageDataset returns the embedded triage dataset, rooted at its folder.
func TriageDataset() fs.FS {
	sub, err := fs.Sub(orbitRun, "orbit_run")
	if err != nil {
		panic("samples: " + err.Error()) // the folder is embedded at build time
	}
	return sub
}
