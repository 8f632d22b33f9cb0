package signoff

// Role is what an actor is. Humans and agents hold different roles and every
// permission check starts from the role.
type Role string

// Human roles.
const (
	RoleReporter Role = "reporter"
	RoleOperator Role = "operator"
	RoleOwner    Role = "owner"
	RoleViewer   Role = "viewer"
)

// Agent roles.
const (
	RoleConcierge  Role = "concierge"
	RoleTriager    Role = "triager"
	RoleReproducer Role = "reproducer"
	RoleFixer      Role = "fixer"
	RoleReviewer   Role = "reviewer"
	RolePlanner    Role = "planner"
	RoleRecorder   Role = "recorder"
)

// RoleSystem is the server acting on its own (verifier, gate, scheduler). It
// is never issued a credential.
const RoleSystem Role = "system"

// HumanRoles and AgentRoles list the roles a credential may be issued for.
var (
	HumanRoles = []Role{RoleReporter, RoleOperator, RoleOwner, RoleViewer}
	AgentRoles = []Role{RoleConcierge, RoleTriager, RoleReproducer, RoleFixer, RoleReviewer, RolePlanner, RoleRecorder}
)

// IsHuman reports whether r is a human role.
func (r Role) IsHuman() bool {
	for _, h := range HumanRoles {
		if r == h {
			return true
		}
	}
	return false
}

// IsAgent reports whether r is an agent role.
func (r Role) IsAgent() bool {
	for _, a := range AgentRoles {
		if r == a {
			return true
		}
	}
	return false
}

// Assignable reports whether an actor with this role may be created and given
// a credential. The system role is internal only.
func (r Role) Assignable() bool { return r.IsHuman() || r.IsAgent() }

// AllRoles returns every assignable role, humans first.
func AllRoles() []Role {
	out := append([]Role{}, HumanRoles...)
	return append(out, AgentRoles...)
}
