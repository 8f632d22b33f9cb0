package crew

import (
	"fmt"

	"github.com/signoff-dev/signoff/agent"
)

// Register adds the crew's tools to reg, and its four runtime roles, on
// the builtin provider, to reg's defaults. A workspace that configures a
// role itself (e.g. the investigator on a model) overrides that role.
func Register(reg *agent.Registry) {
	for _, t := range Tools() {
		reg.Register(t)
	}
	cfg, err := agent.ParseConfig([]byte(Roles(agent.ProviderBuiltin)), nil)
	if err != nil {
		panic(fmt.Sprintf("crew: built-in roles: %v", err))
	}
	for _, name := range []string{RoleIntake, RoleInvestigator, RoleTriage, RoleWriter} {
		reg.AddDefaultRoles(cfg.Roles[name])
	}
}
