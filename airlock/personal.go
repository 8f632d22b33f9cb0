package airlock

// personalKindNames names the kinds of national identifiers and addresses.
var personalKindNames []string
