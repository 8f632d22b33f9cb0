//go:build race

package tamper_test

// raceEnabled: the race detector slows everything several times over, so
// timing checks do not apply.
const raceEnabled = true
