package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

const messageColumns = `id, workspace_id, case_id, author_id, author_role, body, mentions, addressed, created_at`

func scanMessage(sc scanner, m *signoff.Message) error {
	var role, mentions string
	var at int64
	if err := sc.Scan(&m.ID, &m.WorkspaceID, &m.CaseID, &m.AuthorID, &role, &m.Body, &mentions, &m.Addressed, &at); err != nil {
		return err
	}
	m.AuthorRole, m.CreatedAt = signoff.Role(role), fromMicros(at)
	if err := json.Unmarshal([]byte(mentions), &m.Mentions); err != nil {
		return fmt.Errorf("message %s mentions: %w", m.ID, err)
	}
	return nil
}

// Refusals of a mention that found no agent to ask.
const (
	refusedNoAgent = "no such agent"
	refusedTwice   = "already addressed in this message"
)

// resolveMention finds the enabled agent a handle names: by name (names are
// unique in a workspace, compared without case) or else by role. Humans,
// human roles and unknown handles resolve to nothing.
func resolveMention(agents []signoff.Agent, h string) (signoff.Agent, string) {
	var byName, byRole []signoff.Agent
	for _, a := range agents {
		if strings.ToLower(a.Name) == h {
			byName = append(byName, a)
		}
		if string(a.Role) == h {
			byRole = append(byRole, a)
		}
	}
	switch {
	case len(byName) == 1:
		return byName[0], ""
	case len(byName) > 1:
		return signoff.Agent{}, fmt.Sprintf("several agents answer to @%s: mention one by its exact name", h)
	case len(byRole) == 1:
		return byRole[0], ""
	case len(byRole) > 1:
		return signoff.Agent{}, fmt.Sprintf("several %s agents: mention one by name", h)
	}
	return signoff.Agent{}, refusedNoAgent
}

// PostMessage implements signoff.ConversationService. Mentions are
// resolved and checked against each agent's addressing policy with the
// authenticated sender only; an admitted mention opens a "mention" task for
// the agent in the same transaction as the message.
func (s *DB) PostMessage(ctx context.Context, by signoff.Actor, caseID, body string) (signoff.Message, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.Message{}, err
	}
	if err := checkProse("body", body, true, maxMessageBody); err != nil {
		return signoff.Message{}, err
	}
	handles := s.addressing.Mentions(body)
	bodyDigest, err := canonical.Digest(body)
	if err != nil {
		return signoff.Message{}, err
	}
	var m signoff.Message
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.visibleCase(ctx, tx, by, caseID)
		if err != nil {
			return err
		}
		// An agent speaks only in the room of a case it has worked on (a
		// task of its own there), as it asks for attention and reads the
		// ledger: a message of an agent with nothing to do with the case
		// would open tasks there for other agents, receipts to act on a
		// case no one gave it.
		if by.Role.IsAgent() {
			var involved bool
			if err := tx.QueryRowContext(ctx, `SELECT `+agentSeesCase("$1", "$2", "$3"), c.WorkspaceID, by.ID, c.ID).Scan(&involved); err != nil {
				return err
			}
			if !involved {
				return signoff.Errorf(signoff.EFORBIDDEN, "an agent posts only in the room of a case it has worked on (a task of its own)")
			}
		}
		now := s.clock()
		m = signoff.Message{ID: signoff.NewID(signoff.PrefixMessage), WorkspaceID: c.WorkspaceID, CaseID: c.ID, AuthorID: by.ID,
			AuthorRole: by.Role, Body: body, Mentions: []signoff.Mention{}, CreatedAt: now}
		var tasks []EventInput
		if len(handles) > 0 {
			agents, err := s.listAgents(ctx, tx, c.WorkspaceID, true)
			if err != nil {
				return err
			}
			sender := signoff.AddressSender{ID: by.ID, Role: by.Role}
			if by.Role.IsAgent() {
				for _, a := range agents {
					if a.ID == by.ID {
						sender.OwnerID = a.OwnerID
					}
				}
			}
			addressed := map[string]bool{}
			for _, h := range handles {
				mn := signoff.Mention{Handle: h}
				a, refused := resolveMention(agents, h)
				switch {
				case refused != "":
					mn.Refused = refused
				case by.Role == signoff.RoleReporter:
					mn.AgentID, mn.Refused = a.ID, signoff.AddressReasonReporter
				case addressed[a.ID]:
					mn.AgentID, mn.Refused = a.ID, refusedTwice
				default:
					mn.AgentID = a.ID
					pol, err := s.policyOf(ctx, tx, a.ID)
					if err != nil {
						return err
					}
					ok, why := s.addressing.Admits(pol, signoff.AddressedAgent{ID: a.ID, Name: a.Name, OwnerID: a.OwnerID}, sender, c.ID, c.ProjectID)
					if !ok {
						mn.Refused = why
						break
					}
					input, err := canonical.Marshal(map[string]string{"message_id": m.ID, "case_id": c.ID, "from": by.ID, "body": body})
					if err != nil {
						return err
					}
					t := s.newTask(c.WorkspaceID, c.ID, "mention", a.Actor, input, sha256Hex(input), "", by.ID, now)
					if err := s.insertTask(ctx, tx, t); err != nil {
						return err
					}
					addressed[a.ID] = true
					mn.TaskID = t.ID
					tasks = append(tasks, taskCreated(t))
				}
				m.Mentions = append(m.Mentions, mn)
			}
		}
		m.Addressed = len(tasks) > 0
		mentions, err := json.Marshal(m.Mentions)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (`+messageColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			m.ID, m.WorkspaceID, m.CaseID, m.AuthorID, string(m.AuthorRole), m.Body, string(mentions), m.Addressed, micros(now)); err != nil {
			return err
		}
		events := append([]EventInput{{CaseID: c.ID, Type: "message.posted", ActorID: by.ID, Payload: map[string]any{
			"message_id": m.ID, "author_role": string(by.Role), "body_digest": bodyDigest, "body_bytes": len(body),
			"mentions": m.Mentions, "addressed": m.Addressed,
		}}}, tasks...)
		_, err = s.appendEvents(ctx, tx, c.WorkspaceID, events)
		return err
	})
	if err != nil {
		return signoff.Message{}, fmt.Errorf("post message on %s: %w", caseID, err)
	}
	if len(m.Mentions) == 0 {
		m.Mentions = nil
	}
	return m, nil
}

// maxListedMessages bounds one read of a room: the newest are returned.
const maxListedMessages = 1000

// ListMessages implements signoff.ConversationService: a room's messages,
// oldest first. A reporter reads only the room of their own case.
func (s *DB) ListMessages(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.Message, error) {
	c, err := s.GetCase(ctx, by, caseID)
	if err != nil {
		return nil, err
	}
	// An agent reads the room of a case it has (or had) a task on, as it
	// reads that case's ledger (agentSeesCase); of any other, nothing. The
	// ledger keeps a message's digest, the room its words.
	if by.Role.IsAgent() {
		var involved bool
		if err := s.db.QueryRowContext(ctx, `SELECT `+agentSeesCase("$1", "$2", "$3"), c.WorkspaceID, by.ID, c.ID).Scan(&involved); err != nil {
			return nil, err
		}
		if !involved {
			return nil, nil
		}
	}
	out, err := queryAll(ctx, s.db, scanMessage, `SELECT `+messageColumns+` FROM (SELECT `+messageColumns+` FROM messages
		WHERE workspace_id = $1 AND case_id = $2 ORDER BY id DESC LIMIT $3) AS recent ORDER BY id`, by.WorkspaceID, caseID, maxListedMessages)
	if err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", caseID, err)
	}
	for i := range out {
		if len(out[i].Mentions) == 0 {
			out[i].Mentions = nil
		}
	}
	return out, nil
}

// policyOf returns an agent's stored policy, or the empty policy (the
// default: owner and the owner's agents) when it has none.
func (s *DB) policyOf(ctx context.Context, q queryer, agentID string) (signoff.AddressingPolicy, error) {
	p := signoff.AddressingPolicy{Rules: []signoff.AddressRule{}}
	var raw string
	err := q.QueryRowContext(ctx, `SELECT policy FROM addressing_policies WHERE agent_id = $1`, agentID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	} else if err != nil {
		return p, fmt.Errorf("policy of %s: %w", agentID, err)
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, fmt.Errorf("policy of %s: %w", agentID, err)
	}
	if p.Rules == nil {
		p.Rules = []signoff.AddressRule{}
	}
	return p, nil
}

// SetAddressingPolicy implements signoff.ConversationService.
func (s *DB) SetAddressingPolicy(ctx context.Context, by signoff.Actor, agentID string, p signoff.AddressingPolicy) error {
	if err := signoff.CheckID("agent", signoff.PrefixActor, agentID); err != nil {
		return err
	}
	if err := s.addressing.Check(p); err != nil {
		return err
	}
	if p.Rules == nil {
		p.Rules = []signoff.AddressRule{}
	}
	doc, err := canonical.Marshal(p)
	if err != nil {
		return err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		a, err := s.getAgent(ctx, tx, by.WorkspaceID, agentID)
		if err != nil {
			return err
		}
		if by.Role != signoff.RoleOwner && (a.OwnerID == "" || by.ID != a.OwnerID) {
			return signoff.Errorf(signoff.EFORBIDDEN, "only the agent's owner or a workspace owner may set its addressing policy")
		}
		now := s.clock()
		if _, err := tx.ExecContext(ctx, `INSERT INTO addressing_policies (agent_id, workspace_id, policy, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (agent_id) DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
			a.ID, a.WorkspaceID, string(doc), micros(now), by.ID); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, a.WorkspaceID, "", "addressing.policy_set", by.ID, map[string]any{
			"agent_id": a.ID, "policy_digest": sha256Hex(doc), "rules": len(p.Rules),
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("set addressing policy of %s: %w", agentID, err)
	}
	return nil
}

// GetAddressingPolicy implements signoff.ConversationService. People who
// run the desk, the server, the agent itself and its owner may read it.
func (s *DB) GetAddressingPolicy(ctx context.Context, by signoff.Actor, agentID string) (signoff.AddressingPolicy, error) {
	if err := signoff.CheckID("agent", signoff.PrefixActor, agentID); err != nil {
		return signoff.AddressingPolicy{}, err
	}
	a, err := s.getAgent(ctx, s.db, by.WorkspaceID, agentID)
	if err != nil {
		return signoff.AddressingPolicy{}, err
	}
	if !canIssue(by) && by.ID != a.ID && (a.OwnerID == "" || by.ID != a.OwnerID) {
		return signoff.AddressingPolicy{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read this agent's addressing policy", by.Role)
	}
	return s.policyOf(ctx, s.db, a.ID)
}
