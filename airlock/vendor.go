package airlock

// vendorKindNames names the kinds of the vendor rule set, in rule order.
func vendorKindNames() []string { return nil }
