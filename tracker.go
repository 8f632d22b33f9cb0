package signoff

import "context"

// Tracker is a project's issue tracker. The built-in one lives in Signoff's
// store; adapters for GitHub or Jira implement the same interface.
//
// Every method answers ENOTFOUND for a project (or ticket) outside by's
// workspace, exactly as for a missing one, and EFORBIDDEN for a role that
// may not do it: reporters read nothing; people who run the desk (owner,
// operator), the server, the CLI and agents create tickets and comment;
// only the desk, the server and the CLI edit.
type Tracker interface {
	// ListTickets returns the project's tickets in tracker order (imported
	// order, then creation order).
	ListTickets(ctx context.Context, by Actor, projectID string) ([]Ticket, error)
	GetTicket(ctx context.Context, by Actor, projectID, ticketID string) (Ticket, error)
	// CreateTicket files a ticket. An empty t.ID gets the next id
	// "<PREFIX>-<n>": the most common alphabetic prefix of the project's
	// ticket ids (else "T") and one more than the highest number filed
	// under it. Status defaults to open; severity must be one of
	// Severities; the component must exist in the project's
	// CODEOWNERS when it has any, and an empty owner is taken from there.
	// EINVALID for bad fields, ECONFLICT for a duplicate id.
	CreateTicket(ctx context.Context, by Actor, projectID string, t Ticket) (Ticket, error)
	// AddComment appends a comment (a +1 or a note) and returns the
	// ticket. An empty author is by's name and an empty time is now.
	AddComment(ctx context.Context, by Actor, projectID, ticketID string, c Comment) (Ticket, error)
	// UpdateTicket replaces the editable fields of the ticket t.ID (title,
	// status, severity, component, affected versions, fixed_in, owner,
	// created, description). Comments and approved_by are history: they
	// are kept as stored whatever t says.
	UpdateTicket(ctx context.Context, by Actor, projectID string, t Ticket) (Ticket, error)
}

// TicketPatch changes some fields of a ticket; a nil field keeps its value.
// FixedIn set to an empty string clears it.
type TicketPatch struct {
	Title            *string   `json:"title"`
	Status           *string   `json:"status"`
	Severity         *string   `json:"severity"`
	Component        *string   `json:"component"`
	AffectedVersions *[]string `json:"affected_versions"`
	FixedIn          *string   `json:"fixed_in"`
	Owner            *string   `json:"owner"`
	Created          *string   `json:"created"`
	Description      *string   `json:"description"`
}

// ProjectDataService is a project's triage data: the built-in tracker, the
// crash log, release data and CODEOWNERS. Every write appends a ledger
// event in its own transaction.
type ProjectDataService interface {
	Tracker
	// PatchTicket applies the patch atomically under the ticket's lock, so
	// concurrent patches of different fields both take effect. Same rules
	// and errors as UpdateTicket.
	PatchTicket(ctx context.Context, by Actor, projectID, ticketID string, p TicketPatch) (Ticket, error)
	// ImportDataset replaces the project's tickets, crashes, releases and
	// owners with d's in one transaction; d.Items and d.Expected are not
	// project data and are ignored here.
	ImportDataset(ctx context.Context, by Actor, projectID string, d Dataset) error
	// ListCrashes returns the project's crash log in arrival order.
	ListCrashes(ctx context.Context, by Actor, projectID string) ([]CrashEvent, error)
	// AddCrashes appends events to the crash log.
	AddCrashes(ctx context.Context, by Actor, projectID string, evs []CrashEvent) error
	// GetReleases returns the project's release data (empty when none was
	// ever put).
	GetReleases(ctx context.Context, by Actor, projectID string) (Releases, error)
	PutReleases(ctx context.Context, by Actor, projectID string, r Releases) error
	// GetOwners returns the project's CODEOWNERS in file order.
	GetOwners(ctx context.Context, by Actor, projectID string) ([]Owner, error)
	// PutOwners replaces the project's CODEOWNERS. Components are unique
	// and contain no white space.
	PutOwners(ctx context.Context, by Actor, projectID string, o []Owner) error
}
