//go:build race

package triage_test

const raceEnabled = true
