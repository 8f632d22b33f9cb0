//go:build !race

package tamper_test

const raceEnabled = false
