// Package mcp is the door for external agents (Claude Code, Codex,
// OpenHands, a team's bot): a Model Context Protocol server, over stdio
// ([ServeStdio]) and streamable HTTP ([Handler]), built on the official Go
// SDK.
//
// A server is bound to one authenticated agent identity and offers exactly
// the tools of that identity's role. People and the server itself are
// refused: MCP is for agents. Every tool acts as the agent through the
// store, so the store's checks (receipts, input digests, assignment,
// addressing policies) hold here as on every other path, and every refusal
// comes back to the model as a tool result with IsError set and the text
// "<code>: <message>" (for example "forbidden: task is assigned to another
// identity"). Internal failures say only "internal error"; the detail is
// logged.
//
// # Tools
//
// Every agent role has the common tools:
//
//	tasks.list          the caller's tasks (status?, limit?)
//	task.get            one task, its input spotlighted through the airlock
//	task.submit         record a result against the task's receipt
//	task.handoff        hand a recorded task on to an allowed role
//	task.give_up        hand the task to a person (needs_human)
//	case.post_message   post in the case's conversation
//	case.request_attention  a note asking people to look; moves nothing
//	decision.status     read (and optionally long-poll) a human decision
//	receipt.get         the ledger receipt of a recorded task
//	presence.heartbeat  keep an idle agent shown as connected
//
// Roles add their own tools (the table is roleTools, in tools.go):
//
//	reproducer          repro.list_source, repro.read_source, repro.propose
//	fixer               fix.list_source, fix.read_source, fix.propose
//	reviewer            review.note (an advisory note, never a sign-off)
//	planner             change.read_request, change.propose_plan
//
// The reproducer's and fixer's tools are the bug desk's own agent tools
// (list_source, read_source, propose_reproduction, propose_fix in
// Options.Tools), offered to an external agent: each quotes task_id and
// input_digest, and runs only on the caller's open task of its kind with
// that digest, whose role the workspace leaves to an external agent. The
// arguments pass through the tool's own checks (Prepare), so MCP and
// in-process calls meet the same guards, and an accepted proposal records
// the task's result and closes it exactly as the runtime does (live
// evidence). A proposal is checked by Signoff (the sandbox, the frozen
// harness) and reviewed by people; it lets nothing through by itself. A
// server whose registry lacks the desk's tools answers "unavailable".
//
// The planner's tools draft the plan of a change request (SPEC section 4)
// through the change desk (Options.ChangeDesk), as the calling agent with
// via "mcp": change.read_request shows the request, its current plan and
// review, the targets the policy allows and the project's flags
// (read-only); change.propose_plan, quoting the planner's open task on
// the case (task_id, input_digest), stores a plan, which the workspace
// policy reviews at once, and answers with the case's state, the plan's
// digest and every rule's result, so a failing review is the agent's to
// fix; a plan that passes records the task's result and closes it. A plan
// goes no further by itself: people sign its digest, and a person runs the
// gate. A server without the change desk answers "unavailable".
//
// An agent changes a case only on its open task there, and never out of a
// state a person's decision produced (workflow.HumanDecided: an approved
// bug or change, and what follows from it): the store refuses it on every
// path. There the agent has case.request_attention, which records a
// case.attention event and moves nothing.
//
// No tool approves, merges, runs a change or speaks for a person: those
// steps are human-only and exist on no agent path.
//
// Every tool call also records a heartbeat for the caller (at most one per
// Options.HeartbeatEvery per agent and process; presence.heartbeat always
// records), named after the MCP client (clientInfo) when it said who it is,
// else "mcp".
package mcp
