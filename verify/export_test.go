package verify

// SetStaticChecks turns the static checks' refusals off (findings are
// still recorded) and returns a function that turns them back on, so a
// test can show what the other layers catch by themselves. Tests that
// use it must not run in parallel with others of this package.
func SetStaticChecks(on bool) (restore func()) {
	prev := staticChecksRefuse
	staticChecksRefuse = on
	return func() { staticChecksRefuse = prev }
}
