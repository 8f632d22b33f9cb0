package signoff

// AddressedAgent is the agent a mention resolved to (addressing.AgentInfo).
type AddressedAgent struct {
	ID string
	// Name is used in refusal reasons; the id stands in when empty.
	Name string
	// OwnerID is the person responsible for the agent (empty if none).
	OwnerID string
}

// AddressSender is the authenticated author of a message: who the server
// says they are, never who the text says they are (addressing.SenderInfo).
type AddressSender struct {
	ID   string
	Role Role
	// OwnerID is, for an agent sender, the owner of that agent.
	OwnerID string
}

// AddressReasonReporter is why a reporter's mention opens no task
// (addressing.ReasonReporter).
const AddressReasonReporter = "reporters reach agents only through intake and their tracking link"

// AddressingRules decide who may address an agent (the addressing package
// implements them). The store applies them in the transaction that reads
// the agents and their policies; it is given them at New and refuses to
// open without them.
type AddressingRules interface {
	// Mentions returns the @handles of a message body.
	Mentions(body string) []string
	// Admits reports whether sender may address agent on a case under
	// policy p, and if not, why.
	Admits(p AddressingPolicy, agent AddressedAgent, sender AddressSender, caseID, projectID string) (bool, string)
	// Check refuses a policy that may not be stored.
	Check(p AddressingPolicy) error
}
