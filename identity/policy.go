package identity

import "github.com/signoff-dev/signoff"

// Operation names one thing an API caller can ask for.
type Operation string

const (
	OpWorkspaceRead   Operation = "workspace.read"
	OpWorkspaceUpdate Operation = "workspace.update"
	OpProjectRead     Operation = "project.read"
	OpProjectWrite    Operation = "project.write"
	OpActorRead       Operation = "actor.read"
	OpActorWrite      Operation = "actor.write"
	OpTokenWrite      Operation = "token.write"
	OpCaseCreate      Operation = "case.create"
	OpCaseList        Operation = "case.list"
	OpCaseRead        Operation = "case.read"
	OpCaseTransition  Operation = "case.transition"
	OpLedgerRead      Operation = "ledger.read"
)

var (
	owner     = []signoff.Role{signoff.RoleOwner}
	staff     = []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer}
	agents    = signoff.AgentRoles
	allButRep = append(append([]signoff.Role{}, staff...), agents...)
)

// policy says which roles may attempt each operation. It is the first of two
// checks: the case transition table then decides per command, and reporters
// are further limited to their own case by the case service.
var policy = map[Operation][]signoff.Role{
	OpWorkspaceRead:   staff,
	OpWorkspaceUpdate: owner,
	OpProjectRead:     allButRep,
	OpProjectWrite:    owner,
	OpActorRead:       {signoff.RoleOwner, signoff.RoleOperator}, // operators need reporter ids to open cases
	OpActorWrite:      owner,
	OpTokenWrite:      owner,
	OpCaseCreate:      {signoff.RoleOwner, signoff.RoleOperator, signoff.RoleConcierge},
	OpCaseList:        allButRep,
	OpCaseRead:        append([]signoff.Role{signoff.RoleReporter}, allButRep...),
	OpCaseTransition:  append([]signoff.Role{signoff.RoleReporter, signoff.RoleOwner, signoff.RoleOperator}, agents...),
	OpLedgerRead:      append([]signoff.Role{signoff.RoleReporter}, allButRep...),
}

// Can reports whether role may attempt op.
func Can(role signoff.Role, op Operation) bool {
	for _, r := range policy[op] {
		if r == role {
			return true
		}
	}
	return false
}

// Authorize returns EFORBIDDEN unless role may attempt op.
func Authorize(role signoff.Role, op Operation) error {
	if !Can(role, op) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not %s", role, op)
	}
	return nil
}
