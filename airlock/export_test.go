package airlock

// KindNames returns the names of every redaction kind, in the order
// Redact reports them.
func KindNames() []string { return kindNames }
