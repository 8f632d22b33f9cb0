package identity

import (
	"maps"
	"slices"

	"github.com/signoff-dev/signoff"
)

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

	// Agent work: tasks and their receipts, model transcripts, the case
	// room, addressing policies, decisions, presence and role configuration.
	OpTaskCreate      Operation = "task.create"
	OpTaskRead        Operation = "task.read"
	OpTaskSubmit      Operation = "task.submit"
	OpTaskClose       Operation = "task.close"
	OpCallRead        Operation = "call.read"
	OpMessagePost     Operation = "message.post"
	OpMessageRead     Operation = "message.read"
	OpAddressingRead  Operation = "addressing.read"
	OpAddressingWrite Operation = "addressing.write"
	OpDecisionRead    Operation = "decision.read"
	OpDecisionDecide  Operation = "decision.decide"
	OpAgentRead       Operation = "agent.read"
	OpHeartbeat       Operation = "agent.heartbeat"
	OpRolesRead       Operation = "roles.read"
	OpRolesWrite      Operation = "roles.write"

	// Project data for triage: the built-in tracker, crash log, release
	// data and CODEOWNERS.
	OpProjectDataRead  Operation = "projectdata.read"
	OpTicketWrite      Operation = "ticket.write"
	OpProjectDataWrite Operation = "projectdata.write"

	// The bug loop: repository settings, the loop record, candidates from
	// people, signed approvals, the human merge and approver keys.
	OpRepoRead        Operation = "repo.read"
	OpRepoWrite       Operation = "repo.write"
	OpLoopRead        Operation = "loop.read"
	OpLoopStart       Operation = "loop.start"
	OpCandidateSubmit Operation = "candidate.submit"
	OpApprovalRead    Operation = "approval.read"
	OpApprove         Operation = "approval.sign"
	OpMerge           Operation = "merge"
	// A reproduction's test source is read, and approved or rejected, by
	// people before it freezes (the SYNKAI rule).
	OpHarnessRead   Operation = "harness.read"
	OpHarnessReview Operation = "harness.review"
	OpKeyRead       Operation = "key.read"
	OpKeyWrite      Operation = "key.write"

	// The built-in flag store. There is no operation that sets a flag's
	// value: changes go through change requests and the gate.
	OpFlagRead     Operation = "flag.read"
	OpFlagDeclare  Operation = "flag.declare"
	OpFlagKeyWrite Operation = "flagkey.write"

	// The change loop (SPEC section 4): change requests, their plans and
	// receipts, the gate's execution and compensating rollbacks, and the
	// workspace's change policy. Approving a change is OpApprove, and
	// reading its card OpApprovalRead, as for the bug loop.
	OpChangeRead    Operation = "change.read"
	OpChangeRequest Operation = "change.request"
	OpChangePlan    Operation = "change.plan"
	OpChangeExecute Operation = "change.execute"
	OpPolicyRead    Operation = "policy.read"
	OpPolicyWrite   Operation = "policy.write"
	// OpFlagBypass is the emergency write the policy's emergency_bypass
	// may allow; the policy names the roles, this admits the people who
	// run the desk to ask.
	OpFlagBypass Operation = "flag.bypass"

	// Notifications: the channels they go to, the outbox of messages and
	// their delivery attempts, approval cards and who a chat user is.
	OpChannelRead   Operation = "channel.read"
	OpChannelWrite  Operation = "channel.write"
	OpOutboxRead    Operation = "outbox.read"
	OpOutboxRetry   Operation = "outbox.retry"
	OpCardRead      Operation = "card.read"
	OpChatUserWrite Operation = "chatuser.write"
)

var (
	owner     = []signoff.Role{signoff.RoleOwner}
	staff     = []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer}
	desk      = []signoff.Role{signoff.RoleOwner, signoff.RoleOperator}
	agents    = signoff.AgentRoles
	allButRep = append(append([]signoff.Role{}, staff...), agents...)
	// deskAgents are the people who run the desk and the agents.
	deskAgents = append(append([]signoff.Role{}, desk...), agents...)
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

	// People who run the desk issue tasks; agents reach new tasks only
	// through handoffs and addressing. Every reader below that is an agent
	// sees only its own tasks and transcripts: the store enforces that.
	OpTaskCreate: desk,
	OpTaskRead:   allButRep,
	// Submitting a result and handing off quote a receipt issued to an
	// agent identity, so only agents hold them.
	OpTaskSubmit: agents,
	// People cancel any task; an agent may only give up its own (the store
	// enforces both).
	OpTaskClose: deskAgents,
	OpCallRead:  allButRep,
	// Viewers only watch; reporters speak through intake and their
	// tracking link.
	OpMessagePost: deskAgents,
	OpMessageRead: allButRep,
	// An agent may read its own addressing policy, and the store further
	// admits only the agent's owner or a workspace owner to change one.
	OpAddressingRead:  deskAgents,
	OpAddressingWrite: desk,
	OpDecisionRead:    allButRep,
	// SPEC principle 4: agents never approve. Deciding is for the people
	// who run the desk, and for no one else.
	OpDecisionDecide: desk,
	OpAgentRead:      staff,
	OpHeartbeat:      agents,
	OpRolesRead:      staff,
	OpRolesWrite:     owner,

	// Everyone but reporters reads a project's triage data. The triage
	// crew's writer files tickets and +1 comments through its tools, so
	// agents hold ticket.write; editing tickets, importing and replacing
	// crash logs, releases and CODEOWNERS is for the desk.
	OpProjectDataRead:  allButRep,
	OpTicketWrite:      deskAgents,
	OpProjectDataWrite: desk,

	// SPEC principle 4: no agent role appears on approving or merging, nor
	// on the keys that sign approvals. Candidates from people are the
	// desk's; agents propose theirs through the fixer's tool.
	OpRepoRead:        allButRep,
	OpRepoWrite:       owner,
	OpLoopRead:        allButRep,
	OpLoopStart:       desk,
	OpCandidateSubmit: desk,
	OpApprovalRead:    desk,
	OpApprove:         desk,
	OpMerge:           desk,
	// Whether a reproduction's test checks the reported behaviour is
	// decided by the people who run the desk, over its review digest;
	// viewers read the source too. No agent, no reporter.
	OpHarnessRead:   staff,
	OpHarnessReview: desk,
	OpKeyRead:       desk,
	OpKeyWrite:      desk,

	// Everyone but reporters reads flags (the planner needs the current
	// state to draft a plan). Declaring a new flag and the environments'
	// OFREP keys are the owner's. No role writes a flag's value here: the
	// change gate does, after a signed approval.
	OpFlagRead:     allButRep,
	OpFlagDeclare:  owner,
	OpFlagKeyWrite: owner,

	// Everyone but reporters reads change requests, plans, receipts and
	// the change policy. People open requests: an agent drafts plans for
	// them but does not ask for changes on its own. The planner agent
	// drafts plans, as people may; the policy reviews every plan whoever
	// drafted it. SPEC principle 4: no agent role executes a change or
	// rolls one back (the gate runs only for the people who run the
	// desk), and only the owner sets the policy every approval names.
	OpChangeRead:    allButRep,
	OpChangeRequest: desk,
	OpChangePlan:    {signoff.RoleOwner, signoff.RoleOperator, signoff.RolePlanner},
	OpChangeExecute: desk,
	OpPolicyRead:    allButRep,
	OpPolicyWrite:   owner,
	OpFlagBypass:    desk,

	// The people who run and watch the desk see where notifications go,
	// what was sent and the approval cards; no agent and no reporter does.
	// Only the owner configures channels (their secrets are sealed and
	// never shown) and says which chat user is which person: a mapping is
	// what lets a chat answer count as that person's. Re-driving a dead
	// message is for the people who run the desk.
	OpChannelRead:   staff,
	OpChannelWrite:  owner,
	OpOutboxRead:    staff,
	OpOutboxRetry:   desk,
	OpCardRead:      staff,
	OpChatUserWrite: owner,
}

// Operations lists every operation the policy knows, sorted.
func Operations() []Operation {
	return slices.Sorted(maps.Keys(policy))
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
