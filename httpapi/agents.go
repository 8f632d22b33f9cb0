package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
)

// listAgents lists the workspace's agents; one counts as connected only
// while its last heartbeat is within signoff.DefaultPresenceWindow.
func (s *server) listAgents(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	as, err := s.store.ListAgents(r.Context(), by.WorkspaceID, signoff.DefaultPresenceWindow)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": as})
	return nil
}

type heartbeatInput struct {
	Client string `json:"client"`
}

type heartbeatResult struct {
	AgentID string `json:"agent_id"`
	// WindowSeconds is how long the agent counts as connected without
	// another heartbeat.
	WindowSeconds int `json:"window_seconds"`
}

// heartbeat marks the calling agent as connected now.
func (s *server) heartbeat(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in heartbeatInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.store.Heartbeat(r.Context(), by, in.Client); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, heartbeatResult{AgentID: by.ID, WindowSeconds: int(signoff.DefaultPresenceWindow.Seconds())})
	return nil
}

func (s *server) getAddressing(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	p, err := s.store.GetAddressingPolicy(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, normalPolicy(p))
	return nil
}

// putAddressing replaces an agent's addressing policy. The rules must be
// given, even as an empty list (which means the default: the agent's owner
// and the owner's agents), so that a body missing them by mistake does not
// silently reset the policy.
func (s *server) putAddressing(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.AddressingPolicy
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Rules == nil {
		return signoff.Errorf(signoff.EINVALID, "rules is required; an empty list restores the default (the agent's owner and the owner's agents)")
	}
	id := r.PathValue("id")
	if err := s.store.SetAddressingPolicy(r.Context(), by, id, in); err != nil {
		return err
	}
	p, err := s.store.GetAddressingPolicy(r.Context(), by, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, normalPolicy(p))
	return nil
}

// normalPolicy answers no rules as [] rather than null.
func normalPolicy(p signoff.AddressingPolicy) signoff.AddressingPolicy {
	if p.Rules == nil {
		p.Rules = []signoff.AddressRule{}
	}
	return p
}

// rolesDoc is the workspace's role configuration: the YAML as stored (or
// the built-in defaults rendered, when the workspace has set none) and the
// configuration it parses to.
type rolesDoc struct {
	YAML string `json:"yaml"`
	// Default is true while the workspace runs on the built-in defaults.
	Default bool                        `json:"default"`
	Roles   map[string]agent.RoleConfig `json:"roles"`
	// Invalid says why a stored configuration no longer validates (a tool
	// it names is gone); the runtime refuses it until it is fixed.
	Invalid string `json:"invalid,omitempty"`
}

func (s *server) getRoles(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	doc, err := s.rolesDoc(r, by.WorkspaceID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, doc)
	return nil
}

func (s *server) rolesDoc(r *http.Request, ws string) (rolesDoc, error) {
	b, err := s.store.GetSetting(r.Context(), ws, agent.SettingKey)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		c := agent.Defaults()
		y, err := c.Marshal()
		if err != nil {
			return rolesDoc{}, err
		}
		return rolesDoc{YAML: string(y), Default: true, Roles: c.Roles}, nil
	} else if err != nil {
		return rolesDoc{}, err
	}
	c, err := agent.ParseConfig(b, s.tools)
	if signoff.ErrorCode(err) == signoff.EINVALID {
		return rolesDoc{YAML: string(b), Roles: map[string]agent.RoleConfig{}, Invalid: signoff.ErrorMessage(err)}, nil
	} else if err != nil {
		return rolesDoc{}, err
	}
	return rolesDoc{YAML: string(b), Roles: c.Roles}, nil
}

type rolesInput struct {
	YAML string `json:"yaml"`
}

// putRoles checks a YAML role configuration against the known tools and
// stores it; an invalid one is refused (422) with the reason and changes
// nothing.
func (s *server) putRoles(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in rolesInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	c, err := agent.SaveConfig(r.Context(), s.store, by, []byte(in.YAML), s.tools)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rolesDoc{YAML: in.YAML, Roles: c.Roles})
	return nil
}
