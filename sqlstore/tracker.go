package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// Size limits of project data. Text limits count runes unless said
// otherwise; prose limits count bytes.
const (
	maxTicketTitle       = 300
	maxTicketProse       = 16 << 10 // description, bytes
	maxCommentBody       = 8 << 10  // bytes
	maxTicketComments    = 1000
	maxTicketVersions    = 100
	maxShortText         = 200 // owner, author, created, times, devices, ...
	maxVersionText       = 64
	maxComponentText     = 100
	maxSignatureText     = 500
	maxStackTopText      = 1000
	maxReleaseNotes      = 4 << 10 // bytes
	maxImportTickets     = 100_000
	maxCrashesPerCall    = 1_000_000
	maxOwners            = 1000
	maxReleases          = 1000
	maxUserShareVersions = 1000
)

// ticketIDRE is what a tracker id looks like: "APP-101", "PROJ-7", "T42".
var ticketIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// canReadProjectData: everyone of the workspace but reporters.
func canReadProjectData(by signoff.Actor) bool { return isStaff(by) || by.Role.IsAgent() }

// canFileTickets: the desk, the server, the CLI, and agents (the triage
// crew's writer files tickets and +1 comments through its tools).
func canFileTickets(by signoff.Actor) bool { return canIssue(by) || by.Role.IsAgent() }

// canEditProjectData: the desk, the server and the CLI only.
func canEditProjectData(by signoff.Actor) bool { return canIssue(by) }

func checkTicketID(id string) error {
	if !ticketIDRE.MatchString(id) {
		return signoff.Errorf(signoff.EINVALID, "invalid ticket id %q: 1 to 64 of A-Z, a-z, 0-9, '_', '.', '-', starting with a letter or digit", cleanLine(id, 80))
	}
	return nil
}

// checkWord returns EINVALID unless s is one line of at most max runes
// without white space (CODEOWNERS fields, components), and, if required,
// not empty.
func checkWord(what, s string, required bool, max int) error {
	if err := signoff.CheckText(what, s, required, max); err != nil {
		return err
	}
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return signoff.Errorf(signoff.EINVALID, "%s %q contains white space", what, s)
	}
	return nil
}

// readProject checks by may read the project's data and that the project
// is in by's workspace.
func (s *DB) readProject(ctx context.Context, by signoff.Actor, projectID string) error {
	if !canReadProjectData(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read project data", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return err
	}
	_, err := s.getProject(ctx, s.db, by.WorkspaceID, projectID)
	return err
}

// lockProject locks the project row of by's workspace for the rest of tx:
// every write of a project's data takes it first, so ticket numbering,
// crash sequences and replacements never interleave. It does not block
// rows that merely reference the project (PostgreSQL's NO KEY UPDATE).
func (s *DB) lockProject(ctx context.Context, tx *sql.Tx, ws, projectID string) error {
	lock := strings.Replace(s.d.ForUpdate, "FOR UPDATE", "FOR NO KEY UPDATE", 1)
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE id = $1 AND workspace_id = $2`+lock, projectID, ws).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return signoff.Errorf(signoff.ENOTFOUND, "project not found")
	}
	return err
}

// ---- tickets ----

// normComment checks a comment and fills its defaults.
func normComment(c *signoff.Comment, by signoff.Actor, now time.Time) error {
	// An agent comments as itself, now: it does not put words under a
	// person's name, nor date them.
	if by.Role.IsAgent() {
		c.Author, c.Time = "", ""
	}
	if c.Author == "" {
		c.Author = cleanLine(by.Name, maxShortText)
	}
	if c.Time == "" {
		c.Time = now.Format(time.RFC3339)
	}
	if err := signoff.CheckText("comment author", c.Author, true, maxShortText); err != nil {
		return err
	}
	if err := signoff.CheckText("comment time", c.Time, true, maxShortText); err != nil {
		return err
	}
	return checkProse("comment body", c.Body, true, maxCommentBody)
}

// ticketLabel names a ticket in messages.
func ticketLabel(t *signoff.Ticket) string {
	if t.ID == "" {
		return "new ticket"
	}
	return "ticket " + t.ID
}

// normTicket checks a ticket's own fields and fills the defaults that need
// no database: status open, empty lists. Severity must be one of
// signoff.Severities when strict (empty is allowed otherwise, for imported
// trackers that have none). An empty id is allowed when the store is to
// number the ticket.
func normTicket(t *signoff.Ticket, strictSeverity, numbered bool) error {
	if !numbered || t.ID != "" {
		if err := checkTicketID(t.ID); err != nil {
			return err
		}
	}
	if err := signoff.CheckText("ticket title", t.Title, true, maxTicketTitle); err != nil {
		return err
	}
	if t.Status == "" {
		t.Status = "open"
	}
	if t.Status != "open" && t.Status != "closed" {
		return signoff.Errorf(signoff.EINVALID, "%s: status must be open or closed, not %q", ticketLabel(t), cleanLine(t.Status, 40))
	}
	if err := checkSeverity(t.Severity, strictSeverity); err != nil {
		return signoff.Errorf(signoff.EINVALID, "%s: %s", ticketLabel(t), signoff.ErrorMessage(err))
	}
	if err := checkWord("component", t.Component, false, maxComponentText); err != nil {
		return err
	}
	if t.AffectedVersions == nil {
		t.AffectedVersions = []string{}
	}
	if len(t.AffectedVersions) > maxTicketVersions {
		return signoff.Errorf(signoff.EINVALID, "%s: more than %d affected versions", ticketLabel(t), maxTicketVersions)
	}
	for _, v := range t.AffectedVersions {
		if err := signoff.CheckText("affected version", v, true, maxVersionText); err != nil {
			return err
		}
	}
	if t.FixedIn != nil && *t.FixedIn == "" {
		t.FixedIn = nil
	}
	if t.FixedIn != nil {
		if err := signoff.CheckText("fixed_in", *t.FixedIn, true, maxVersionText); err != nil {
			return err
		}
	}
	if err := signoff.CheckText("ticket owner", t.Owner, false, maxShortText); err != nil {
		return err
	}
	if err := signoff.CheckText("ticket created", t.Created, false, maxShortText); err != nil {
		return err
	}
	if err := checkProse("ticket description", t.Description, false, maxTicketProse); err != nil {
		return err
	}
	if len(t.Comments) > maxTicketComments {
		return signoff.Errorf(signoff.EINVALID, "%s: more than %d comments", ticketLabel(t), maxTicketComments)
	}
	if len(t.Comments) == 0 {
		t.Comments = nil
	}
	return checkApprovedBy(t.ApprovedBy)
}

func checkSeverity(s string, strict bool) error {
	if s == "" && !strict {
		return nil
	}
	if signoff.SeverityRank(s) < 0 {
		return signoff.Errorf(signoff.EINVALID, "severity must be one of %s, not %q", strings.Join(signoff.Severities, ", "), cleanLine(s, 40))
	}
	return nil
}

// checkApprovedBy checks the form of approved_by: empty (imported),
// "auto" (below the gate's floor) or "human:<who>".
func checkApprovedBy(a string) error {
	if a == "" || a == "auto" {
		return nil
	}
	who, ok := strings.CutPrefix(a, "human:")
	if !ok || checkToken("approver", strings.ToLower(who)) != nil {
		return signoff.Errorf(signoff.EINVALID, `approved_by must be "auto" or "human:<actor id>", not %q`, cleanLine(a, 80))
	}
	return nil
}

// checkApprover checks that a "human:<id>" approver of a new ticket is a
// person of the workspace who may decide (owner or operator) or the CLI.
func (s *DB) checkApprover(ctx context.Context, tx *sql.Tx, ws, a string) error {
	who, ok := strings.CutPrefix(a, "human:")
	if !ok || who == cliActorID {
		return nil
	}
	if !signoff.ValidID(signoff.PrefixActor, who) {
		return signoff.Errorf(signoff.EINVALID, "approved_by names %q, which is not an actor id", who)
	}
	act, err := s.getActor(ctx, tx, ws, who)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return signoff.Errorf(signoff.EINVALID, "approved_by names an unknown actor")
	} else if err != nil {
		return err
	}
	if act.Role != signoff.RoleOwner && act.Role != signoff.RoleOperator {
		return signoff.Errorf(signoff.EINVALID, "approved_by names a %s; only owners and operators approve", act.Role)
	}
	return nil
}

// ownerIndex is a project's CODEOWNERS by component.
type ownerIndex map[string]signoff.Owner

// checkComponent requires component to be in the project's CODEOWNERS when
// it has any, and fills an empty owner from there.
func (o ownerIndex) checkComponent(t *signoff.Ticket) error {
	if len(o) == 0 {
		return nil
	}
	own, ok := o[t.Component]
	if !ok {
		known := make([]string, 0, len(o))
		for c := range o {
			known = append(known, c)
		}
		slices.Sort(known)
		if len(known) > 30 {
			known = append(known[:30], "...")
		}
		if t.Component == "" {
			return signoff.Errorf(signoff.EINVALID, "%s: component is required; CODEOWNERS has %s", ticketLabel(t), strings.Join(known, ", "))
		}
		return signoff.Errorf(signoff.EINVALID, "%s: component %q is not in CODEOWNERS (%s)", ticketLabel(t), cleanLine(t.Component, 100), strings.Join(known, ", "))
	}
	if t.Owner == "" {
		t.Owner = own.Team
	}
	return nil
}

func (s *DB) ownerIndex(ctx context.Context, q rowsQueryer, projectID string) (ownerIndex, error) {
	list, err := queryAll(ctx, q, scanOwner, `SELECT component, team, channel FROM code_owners WHERE project_id = $1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("read CODEOWNERS: %w", err)
	}
	idx := make(ownerIndex, len(list))
	for _, o := range list {
		idx[o.Component] = o
	}
	return idx, nil
}

const ticketColumns = `id, title, status, severity, component, affected_versions, fixed_in, owner, created, description, comments, approved_by`

func scanTicket(sc scanner, t *signoff.Ticket) error {
	var versions, comments string
	var fixed sql.NullString
	if err := sc.Scan(&t.ID, &t.Title, &t.Status, &t.Severity, &t.Component, &versions, &fixed, &t.Owner, &t.Created, &t.Description, &comments, &t.ApprovedBy); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(versions), &t.AffectedVersions); err != nil {
		return fmt.Errorf("ticket %s: affected_versions: %w", t.ID, err)
	}
	if t.AffectedVersions == nil {
		t.AffectedVersions = []string{}
	}
	if err := json.Unmarshal([]byte(comments), &t.Comments); err != nil {
		return fmt.Errorf("ticket %s: comments: %w", t.ID, err)
	}
	if len(t.Comments) == 0 {
		t.Comments = nil
	}
	if fixed.Valid {
		t.FixedIn = &fixed.String
	}
	return nil
}

// ticketRow is a ticket's column values in ticketColumns order, then the
// bookkeeping columns of an insert.
func ticketRow(dst []any, t signoff.Ticket) ([]any, error) {
	versions, err := json.Marshal(t.AffectedVersions)
	if err != nil {
		return nil, err
	}
	comments := []byte("[]")
	if len(t.Comments) > 0 {
		if comments, err = json.Marshal(t.Comments); err != nil {
			return nil, err
		}
	}
	var fixed sql.NullString
	if t.FixedIn != nil {
		fixed = sql.NullString{String: *t.FixedIn, Valid: true}
	}
	return append(dst, t.ID, t.Title, t.Status, t.Severity, t.Component, string(versions), fixed, t.Owner, t.Created, t.Description, string(comments), t.ApprovedBy), nil
}

var ticketInsertColumns = append(strings.Split(ticketColumns, ", "), "workspace_id", "project_id", "position", "created_by", "created_at", "updated_at")

func (s *DB) getTicket(ctx context.Context, q queryer, projectID, id string, lock bool) (signoff.Ticket, error) {
	var t signoff.Ticket
	suffix := ""
	if lock {
		suffix = strings.Replace(s.d.ForUpdate, "FOR UPDATE", "FOR NO KEY UPDATE", 1)
	}
	err := scanTicket(q.QueryRowContext(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE project_id = $1 AND id = $2`+suffix, projectID, id), &t)
	if errors.Is(err, sql.ErrNoRows) {
		return t, signoff.Errorf(signoff.ENOTFOUND, "ticket %s not found", id)
	} else if err != nil {
		return t, fmt.Errorf("get ticket %s: %w", id, err)
	}
	return t, nil
}

// ListTickets implements signoff.Tracker.
func (s *DB) ListTickets(ctx context.Context, by signoff.Actor, projectID string) ([]signoff.Ticket, error) {
	if err := s.readProject(ctx, by, projectID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanTicket, `SELECT `+ticketColumns+` FROM tickets WHERE project_id = $1 ORDER BY position`, projectID)
	if err != nil {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	return out, nil
}

// GetTicket implements signoff.Tracker.
func (s *DB) GetTicket(ctx context.Context, by signoff.Actor, projectID, ticketID string) (signoff.Ticket, error) {
	if err := s.readProject(ctx, by, projectID); err != nil {
		return signoff.Ticket{}, err
	}
	if err := checkTicketID(ticketID); err != nil {
		return signoff.Ticket{}, err
	}
	return s.getTicket(ctx, s.db, projectID, ticketID, false)
}

// nextTicketID numbers a new ticket after the project's existing ones:
// the most common alphabetic prefix (ties: the alphabetically first), else
// "T", and one more than the highest number under it.
func nextTicketID(ids []string) string {
	count := map[string]int{}
	for _, id := range ids {
		if p := alphaPrefix(id); p != "" {
			count[p]++
		}
	}
	prefix, best := "T", 0
	for p, n := range count {
		if n > best || (n == best && p < prefix) {
			prefix, best = p, n
		}
	}
	taken := make(map[string]bool, len(ids))
	high := 0
	for _, id := range ids {
		taken[strings.ToUpper(id)] = true
		rest, ok := strings.CutPrefix(id, prefix)
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, "-_")
		if n, err := strconv.Atoi(rest); err == nil && n > high && rest == strconv.Itoa(n) {
			high = n
		}
	}
	for n := high + 1; ; n++ {
		if id := prefix + "-" + strconv.Itoa(n); !taken[strings.ToUpper(id)] {
			return id
		}
	}
}

// alphaPrefix is the leading ASCII letters of id ("APP" of "APP-101").
func alphaPrefix(id string) string {
	i := strings.IndexFunc(id, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') })
	if i < 0 {
		return id
	}
	return id[:i]
}

// CreateTicket implements signoff.Tracker.
func (s *DB) CreateTicket(ctx context.Context, by signoff.Actor, projectID string, t signoff.Ticket) (signoff.Ticket, error) {
	if !canFileTickets(by) {
		return signoff.Ticket{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not file tickets", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return signoff.Ticket{}, err
	}
	now := s.clock()
	if t.Created == "" {
		t.Created = now.Format(time.DateOnly)
	}
	for i := range t.Comments {
		if err := normComment(&t.Comments[i], by, now); err != nil {
			return signoff.Ticket{}, err
		}
	}
	assign := t.ID == ""
	if err := normTicket(&t, true, true); err != nil {
		return signoff.Ticket{}, err
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		owners, err := s.ownerIndex(ctx, tx, projectID)
		if err != nil {
			return err
		}
		if err := owners.checkComponent(&t); err != nil {
			return err
		}
		if err := s.checkApprover(ctx, tx, by.WorkspaceID, t.ApprovedBy); err != nil {
			return err
		}
		if assign {
			ids, err := queryAll(ctx, tx, scanString, `SELECT id FROM tickets WHERE project_id = $1`, projectID)
			if err != nil {
				return err
			}
			t.ID = nextTicketID(ids)
		}
		var pos int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), 0) FROM tickets WHERE project_id = $1`, projectID).Scan(&pos); err != nil {
			return err
		}
		row, err := ticketRow(nil, t)
		if err != nil {
			return err
		}
		row = append(row, by.WorkspaceID, projectID, pos+1, by.ID, micros(now), micros(now))
		if err := s.insertRows(ctx, tx, "tickets", ticketInsertColumns, 1, func(_ int, dst []any) ([]any, error) { return append(dst, row...), nil }); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "ticket %s already exists", t.ID)
			}
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "ticket.created", by.ID, map[string]any{
			"project_id": projectID, "ticket_id": t.ID, "title": t.Title, "severity": t.Severity,
			"component": t.Component, "owner": t.Owner, "status": t.Status, "approved_by": t.ApprovedBy,
		})
		return err
	})
	if err != nil {
		return signoff.Ticket{}, fmt.Errorf("create ticket: %w", err)
	}
	return t, nil
}

// AddComment implements signoff.Tracker. The ledger keeps the body's
// SHA-256, not the body: comments may carry a reporter's details.
func (s *DB) AddComment(ctx context.Context, by signoff.Actor, projectID, ticketID string, c signoff.Comment) (signoff.Ticket, error) {
	if !canFileTickets(by) {
		return signoff.Ticket{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not comment on tickets", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return signoff.Ticket{}, err
	}
	if err := checkTicketID(ticketID); err != nil {
		return signoff.Ticket{}, err
	}
	now := s.clock()
	if err := normComment(&c, by, now); err != nil {
		return signoff.Ticket{}, err
	}
	var t signoff.Ticket
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		var err error
		if t, err = s.getTicket(ctx, tx, projectID, ticketID, true); err != nil {
			return err
		}
		if len(t.Comments) >= maxTicketComments {
			return signoff.Errorf(signoff.ECONFLICT, "ticket %s has %d comments, the most it may have", ticketID, maxTicketComments)
		}
		t.Comments = append(t.Comments, c)
		body, err := json.Marshal(t.Comments)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tickets SET comments = $1, updated_at = $2 WHERE project_id = $3 AND id = $4`,
			string(body), micros(now), projectID, ticketID); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "ticket.commented", by.ID, map[string]any{
			"project_id": projectID, "ticket_id": ticketID, "author": c.Author, "body_sha256": sha256Hex([]byte(c.Body)),
			"comments": len(t.Comments),
		})
		return err
	})
	if err != nil {
		return signoff.Ticket{}, fmt.Errorf("comment on ticket %s: %w", ticketID, err)
	}
	return t, nil
}

// UpdateTicket implements signoff.Tracker.
func (s *DB) UpdateTicket(ctx context.Context, by signoff.Actor, projectID string, in signoff.Ticket) (signoff.Ticket, error) {
	return s.editTicket(ctx, by, projectID, in.ID, func(t *signoff.Ticket, _ ownerIndex) {
		t.Title, t.Status, t.Severity, t.Component = in.Title, in.Status, in.Severity, in.Component
		t.AffectedVersions, t.FixedIn, t.Owner, t.Created, t.Description = in.AffectedVersions, in.FixedIn, in.Owner, in.Created, in.Description
	})
}

// PatchTicket implements signoff.ProjectDataService. A new component
// without a new owner takes its owner from CODEOWNERS.
func (s *DB) PatchTicket(ctx context.Context, by signoff.Actor, projectID, ticketID string, p signoff.TicketPatch) (signoff.Ticket, error) {
	return s.editTicket(ctx, by, projectID, ticketID, func(t *signoff.Ticket, owners ownerIndex) {
		for _, f := range []struct{ dst, src *string }{{&t.Title, p.Title}, {&t.Status, p.Status}, {&t.Severity, p.Severity},
			{&t.Owner, p.Owner}, {&t.Created, p.Created}, {&t.Description, p.Description}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if p.Component != nil && *p.Component != t.Component {
			t.Component = *p.Component
			if o, ok := owners[t.Component]; ok && p.Owner == nil {
				t.Owner = o.Team
			}
		}
		if p.AffectedVersions != nil {
			t.AffectedVersions = *p.AffectedVersions
		}
		if p.FixedIn != nil {
			v := *p.FixedIn
			t.FixedIn = &v
		}
	})
}

// editTicket applies edit to a ticket under the project's lock and records
// what changed. Id, comments and approved_by are kept whatever edit does. A
// changed severity must be a known one and a changed component must be in
// CODEOWNERS; unchanged ones are left alone (an imported ticket may have
// neither).
func (s *DB) editTicket(ctx context.Context, by signoff.Actor, projectID, ticketID string, edit func(*signoff.Ticket, ownerIndex)) (signoff.Ticket, error) {
	if !canEditProjectData(by) {
		return signoff.Ticket{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not edit tickets", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return signoff.Ticket{}, err
	}
	if err := checkTicketID(ticketID); err != nil {
		return signoff.Ticket{}, err
	}
	var t signoff.Ticket
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		old, err := s.getTicket(ctx, tx, projectID, ticketID, true)
		if err != nil {
			return err
		}
		owners, err := s.ownerIndex(ctx, tx, projectID)
		if err != nil {
			return err
		}
		t = old
		t.AffectedVersions = slices.Clone(old.AffectedVersions)
		edit(&t, owners)
		t.ID, t.Comments, t.ApprovedBy = old.ID, old.Comments, old.ApprovedBy
		if err := normTicket(&t, t.Severity != old.Severity, false); err != nil {
			return err
		}
		if t.Component != old.Component {
			if err := owners.checkComponent(&t); err != nil {
				return err
			}
		}
		changes := ticketChanges(old, t)
		if len(changes) == 0 {
			return nil // nothing changes, nothing to record
		}
		row, err := ticketRow(nil, t)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tickets SET title = $1, status = $2, severity = $3, component = $4, affected_versions = $5,
			fixed_in = $6, owner = $7, created = $8, description = $9, updated_at = $10 WHERE project_id = $11 AND id = $12`,
			row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], micros(s.clock()), projectID, ticketID); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "ticket.updated", by.ID, map[string]any{
			"project_id": projectID, "ticket_id": ticketID, "changes": changes,
		})
		return err
	})
	if err != nil {
		return signoff.Ticket{}, fmt.Errorf("update ticket %s: %w", ticketID, err)
	}
	return t, nil
}

// ticketChanges maps each changed field to its new value; the description
// is recorded by its SHA-256.
func ticketChanges(old, t signoff.Ticket) map[string]any {
	ch := map[string]any{}
	for _, f := range []struct {
		name     string
		old, new string
	}{{"title", old.Title, t.Title}, {"status", old.Status, t.Status}, {"severity", old.Severity, t.Severity},
		{"component", old.Component, t.Component}, {"owner", old.Owner, t.Owner}, {"created", old.Created, t.Created}} {
		if f.old != f.new {
			ch[f.name] = f.new
		}
	}
	if !slices.Equal(old.AffectedVersions, t.AffectedVersions) {
		ch["affected_versions"] = t.AffectedVersions
	}
	if (old.FixedIn == nil) != (t.FixedIn == nil) || (old.FixedIn != nil && *old.FixedIn != *t.FixedIn) {
		ch["fixed_in"] = t.FixedIn
	}
	if old.Description != t.Description {
		ch["description_sha256"] = sha256Hex([]byte(t.Description))
	}
	return ch
}

// ---- crashes ----

// normCrashes checks events and brings their times to what the store
// keeps: UTC with microseconds.
func normCrashes(evs []signoff.CrashEvent) error {
	if len(evs) > maxCrashesPerCall {
		return signoff.Errorf(signoff.EINVALID, "more than %d crash events at once", maxCrashesPerCall)
	}
	for i := range evs {
		e := &evs[i]
		if e.Time.IsZero() {
			return signoff.Errorf(signoff.EINVALID, "crash event %d: timestamp is required", i+1)
		}
		if y := e.Time.UTC().Year(); y < 1 || y > 9999 {
			return signoff.Errorf(signoff.EINVALID, "crash event %d: timestamp is outside the years 1 to 9999", i+1)
		}
		e.Time = e.Time.UTC().Truncate(time.Microsecond)
		for _, f := range []struct {
			what     string
			v        string
			required bool
			max      int
		}{{"signature", e.Signature, true, maxSignatureText}, {"app_version", e.AppVersion, false, maxVersionText},
			{"device", e.Device, false, maxShortText}, {"os", e.OS, false, maxShortText},
			{"stack_top", e.StackTop, false, maxStackTopText}, {"user_id", e.UserID, false, maxShortText}} {
			if err := signoff.CheckText(f.what, f.v, f.required, f.max); err != nil {
				return signoff.Errorf(signoff.EINVALID, "crash event %d: %s", i+1, signoff.ErrorMessage(err))
			}
		}
	}
	return nil
}

// crashDigest is canonical.Digest(evs), written out by hand: a crash log
// of a million events digests in a fraction of a second instead of several
// seconds. Keys are in the canonical (sorted) order; times are in UTC, as
// normCrashes leaves them.
func crashDigest(evs []signoff.CrashEvent) string {
	h := sha256.New()
	buf := make([]byte, 0, 512)
	buf = append(buf, '[')
	for i := range evs {
		e := &evs[i]
		if i > 0 {
			buf = append(buf, ',')
		}
		for _, f := range []struct{ key, v string }{{`{"app_version":`, e.AppVersion}, {`,"device":`, e.Device}, {`,"os":`, e.OS},
			{`,"signature":`, e.Signature}, {`,"stack_top":`, e.StackTop}, {`,"timestamp":`, e.Time.Format(time.RFC3339Nano)}, {`,"user_id":`, e.UserID}} {
			buf = append(buf, f.key...)
			buf = canonical.AppendString(buf, f.v)
		}
		buf = append(buf, '}')
		h.Write(buf)
		buf = buf[:0]
	}
	buf = append(buf, ']')
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

var crashColumns = []string{"workspace_id", "project_id", "seq", "occurred_at", "app_version", "device", "os", "signature", "stack_top", "user_id"}

// insertCrashes appends events after the project's highest sequence.
func (s *DB) insertCrashes(ctx context.Context, tx *sql.Tx, ws, projectID string, evs []signoff.CrashEvent) (first int64, err error) {
	var top int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM crash_events WHERE project_id = $1`, projectID).Scan(&top); err != nil {
		return 0, err
	}
	if s.d.Name == "postgres" {
		return top + 1, insertCrashesUnnest(ctx, tx, ws, projectID, top+1, evs)
	}
	err = s.insertRows(ctx, tx, "crash_events", crashColumns, len(evs), func(i int, dst []any) ([]any, error) {
		e := &evs[i]
		return append(dst, ws, projectID, top+1+int64(i), micros(e.Time), e.AppVersion, e.Device, e.OS, e.Signature, e.StackTop, e.UserID), nil
	})
	return top + 1, err
}

// insertCrashesUnnest sends PostgreSQL one array per column and lets
// unnest make the rows: a few statements of ten parameters each instead of
// thousands of parameters to bind and parse (about a quarter faster).
func insertCrashesUnnest(ctx context.Context, tx *sql.Tx, ws, projectID string, first int64, evs []signoff.CrashEvent) error {
	const chunk = 25_000
	for lo := 0; lo < len(evs); lo += chunk {
		part := evs[lo:min(len(evs), lo+chunk)]
		seqs, ats := make([]int64, len(part)), make([]int64, len(part))
		var cols [6][]string
		for c := range cols {
			cols[c] = make([]string, len(part))
		}
		for i := range part {
			e := &part[i]
			seqs[i], ats[i] = first+int64(lo+i), micros(e.Time)
			cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i] = e.AppVersion, e.Device, e.OS, e.Signature, e.StackTop, e.UserID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO crash_events (`+strings.Join(crashColumns, ", ")+`)
			SELECT $1, $2, u.* FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[]) AS u`,
			ws, projectID, seqs, ats, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]); err != nil {
			return fmt.Errorf("insert into crash_events: %w", err)
		}
	}
	return nil
}

func scanCrash(sc scanner, e *signoff.CrashEvent) error {
	var at int64
	if err := sc.Scan(&at, &e.AppVersion, &e.Device, &e.OS, &e.Signature, &e.StackTop, &e.UserID); err != nil {
		return err
	}
	e.Time = fromMicros(at)
	return nil
}

// ListCrashes implements signoff.ProjectDataService.
func (s *DB) ListCrashes(ctx context.Context, by signoff.Actor, projectID string) ([]signoff.CrashEvent, error) {
	if err := s.readProject(ctx, by, projectID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanCrash, `SELECT occurred_at, app_version, device, os, signature, stack_top, user_id
		FROM crash_events WHERE project_id = $1 ORDER BY seq`, projectID)
	if err != nil {
		return nil, fmt.Errorf("list crashes: %w", err)
	}
	return out, nil
}

// AddCrashes implements signoff.ProjectDataService.
func (s *DB) AddCrashes(ctx context.Context, by signoff.Actor, projectID string, evs []signoff.CrashEvent) error {
	if !canEditProjectData(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not add crash events", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return err
	}
	if len(evs) == 0 {
		return signoff.Errorf(signoff.EINVALID, "no crash events given")
	}
	evs = slices.Clone(evs)
	if err := normCrashes(evs); err != nil {
		return err
	}
	digest := crashDigest(evs)
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		first, err := s.insertCrashes(ctx, tx, by.WorkspaceID, projectID, evs)
		if err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "crashes.added", by.ID, map[string]any{
			"project_id": projectID, "count": len(evs), "sha256": digest, "first_seq": first, "last_seq": first + int64(len(evs)) - 1,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("add crashes: %w", err)
	}
	return nil
}

// ---- releases ----

// normReleases checks release data and makes its lists non-nil.
func normReleases(r *signoff.Releases) error {
	for _, f := range []struct{ what, v string }{{"product", r.Product}, {"company", r.Company}} {
		if err := signoff.CheckText(f.what, f.v, false, maxShortText); err != nil {
			return err
		}
	}
	for _, f := range []struct{ what, v string }{{"current_version", r.CurrentVersion}, {"next_release.version", r.NextRelease.Version},
		{"next_release.code_freeze", r.NextRelease.CodeFreeze}, {"next_release.date", r.NextRelease.Date}} {
		if err := signoff.CheckText(f.what, f.v, false, maxVersionText); err != nil {
			return err
		}
	}
	if len(r.Releases) > maxReleases {
		return signoff.Errorf(signoff.EINVALID, "more than %d releases", maxReleases)
	}
	if r.Releases == nil {
		r.Releases = []signoff.Release{}
	}
	for _, rel := range r.Releases {
		if err := signoff.CheckText("release version", rel.Version, true, maxVersionText); err != nil {
			return err
		}
		if err := signoff.CheckText("release date", rel.Date, false, maxVersionText); err != nil {
			return err
		}
		if err := checkProse("release notes", rel.Notes, false, maxReleaseNotes); err != nil {
			return err
		}
	}
	if len(r.ActiveUsersByVersion) > maxUserShareVersions {
		return signoff.Errorf(signoff.EINVALID, "more than %d versions in active_users_by_version", maxUserShareVersions)
	}
	if r.ActiveUsersByVersion == nil {
		r.ActiveUsersByVersion = map[string]float64{}
	}
	for v, share := range r.ActiveUsersByVersion {
		if err := signoff.CheckText("active_users_by_version key", v, true, maxVersionText); err != nil {
			return err
		}
		if math.IsNaN(share) || share < 0 || share > 100 {
			return signoff.Errorf(signoff.EINVALID, "active_users_by_version[%q] must be a percentage from 0 to 100", v)
		}
	}
	return nil
}

func releasesEmpty(r signoff.Releases) bool {
	return r.Product == "" && r.Company == "" && r.CurrentVersion == "" && len(r.Releases) == 0 &&
		r.NextRelease == (signoff.NextRelease{}) && len(r.ActiveUsersByVersion) == 0
}

func (s *DB) putReleases(ctx context.Context, tx *sql.Tx, by signoff.Actor, projectID string, doc []byte) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO project_releases (project_id, workspace_id, doc, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (project_id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
		projectID, by.WorkspaceID, string(doc), micros(s.clock()), by.ID)
	return err
}

// GetReleases implements signoff.ProjectDataService.
func (s *DB) GetReleases(ctx context.Context, by signoff.Actor, projectID string) (signoff.Releases, error) {
	r := signoff.Releases{Releases: []signoff.Release{}, ActiveUsersByVersion: map[string]float64{}}
	if err := s.readProject(ctx, by, projectID); err != nil {
		return signoff.Releases{}, err
	}
	var doc string
	err := s.db.QueryRowContext(ctx, `SELECT doc FROM project_releases WHERE project_id = $1`, projectID).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	} else if err != nil {
		return r, fmt.Errorf("get releases: %w", err)
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		return signoff.Releases{}, fmt.Errorf("get releases: %w", err)
	}
	err = normReleases(&r)
	return r, err
}

// PutReleases implements signoff.ProjectDataService.
func (s *DB) PutReleases(ctx context.Context, by signoff.Actor, projectID string, r signoff.Releases) error {
	if !canEditProjectData(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not change release data", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return err
	}
	r.Releases, r.ActiveUsersByVersion = slices.Clone(r.Releases), cloneMap(r.ActiveUsersByVersion)
	if err := normReleases(&r); err != nil {
		return err
	}
	doc, err := canonical.Marshal(r)
	if err != nil {
		return err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		if err := s.putReleases(ctx, tx, by, projectID, doc); err != nil {
			return err
		}
		_, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "releases.put", by.ID, map[string]any{
			"project_id": projectID, "sha256": sha256Hex(doc), "current_version": r.CurrentVersion,
			"next_version": r.NextRelease.Version, "code_freeze": r.NextRelease.CodeFreeze, "releases": len(r.Releases),
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("put releases: %w", err)
	}
	return nil
}

func cloneMap(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---- CODEOWNERS ----

func normOwners(o []signoff.Owner) error {
	if len(o) > maxOwners {
		return signoff.Errorf(signoff.EINVALID, "more than %d CODEOWNERS entries", maxOwners)
	}
	seen := make(map[string]bool, len(o))
	for _, e := range o {
		if err := checkWord("component", e.Component, true, maxComponentText); err != nil {
			return err
		}
		if strings.HasPrefix(e.Component, "#") {
			return signoff.Errorf(signoff.EINVALID, "component %q starts with '#', which CODEOWNERS reads as a comment", e.Component)
		}
		if err := checkWord("team", e.Team, true, maxComponentText); err != nil {
			return err
		}
		if err := checkWord("channel", e.Channel, false, maxComponentText); err != nil {
			return err
		}
		if seen[e.Component] {
			return signoff.Errorf(signoff.EINVALID, "component %q is listed twice in CODEOWNERS", e.Component)
		}
		seen[e.Component] = true
	}
	return nil
}

func scanOwner(sc scanner, o *signoff.Owner) error {
	return sc.Scan(&o.Component, &o.Team, &o.Channel)
}

func (s *DB) replaceOwners(ctx context.Context, tx *sql.Tx, ws, projectID string, o []signoff.Owner) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM code_owners WHERE project_id = $1`, projectID); err != nil {
		return err
	}
	return s.insertRows(ctx, tx, "code_owners", []string{"workspace_id", "project_id", "component", "position", "team", "channel"}, len(o),
		func(i int, dst []any) ([]any, error) {
			return append(dst, ws, projectID, o[i].Component, int64(i+1), o[i].Team, o[i].Channel), nil
		})
}

// GetOwners implements signoff.ProjectDataService.
func (s *DB) GetOwners(ctx context.Context, by signoff.Actor, projectID string) ([]signoff.Owner, error) {
	if err := s.readProject(ctx, by, projectID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanOwner, `SELECT component, team, channel FROM code_owners WHERE project_id = $1 ORDER BY position`, projectID)
	if err != nil {
		return nil, fmt.Errorf("get owners: %w", err)
	}
	return out, nil
}

// PutOwners implements signoff.ProjectDataService. Tickets already filed
// under a component that is dropped keep it; only new and changed
// components are checked against CODEOWNERS.
func (s *DB) PutOwners(ctx context.Context, by signoff.Actor, projectID string, o []signoff.Owner) error {
	if !canEditProjectData(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not change CODEOWNERS", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return err
	}
	if err := normOwners(o); err != nil {
		return err
	}
	o = slices.Clone(o)
	if o == nil {
		o = []signoff.Owner{}
	}
	digest, err := canonical.Digest(o)
	if err != nil {
		return err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		if err := s.replaceOwners(ctx, tx, by.WorkspaceID, projectID, o); err != nil {
			return err
		}
		components := make([]string, len(o))
		for i, e := range o {
			components[i] = e.Component
		}
		_, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "owners.put", by.ID, map[string]any{
			"project_id": projectID, "count": len(o), "sha256": digest, "components": components,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("put owners: %w", err)
	}
	return nil
}

// ---- import ----

// ImportDataset implements signoff.ProjectDataService: the project's
// tickets, crash log, release data and CODEOWNERS become d's, all in one
// transaction with one ledger event that carries the counts and the
// SHA-256 of each part as stored.
func (s *DB) ImportDataset(ctx context.Context, by signoff.Actor, projectID string, d signoff.Dataset) error {
	if !canEditProjectData(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not import project data", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return err
	}
	owners := slices.Clone(d.Owners)
	if owners == nil {
		owners = []signoff.Owner{}
	}
	if err := normOwners(owners); err != nil {
		return err
	}
	idx := make(ownerIndex, len(owners))
	for _, o := range owners {
		idx[o.Component] = o
	}
	if len(d.Tickets) > maxImportTickets {
		return signoff.Errorf(signoff.EINVALID, "more than %d tickets", maxImportTickets)
	}
	tickets := make([]signoff.Ticket, len(d.Tickets))
	seen := make(map[string]bool, len(d.Tickets))
	for i, t := range d.Tickets {
		t.AffectedVersions = slices.Clone(t.AffectedVersions)
		t.Comments = slices.Clone(t.Comments)
		if err := normTicket(&t, false, false); err != nil {
			return err
		}
		for j := range t.Comments {
			c := &t.Comments[j]
			if err := signoff.CheckText("comment author", c.Author, false, maxShortText); err != nil {
				return err
			}
			if err := signoff.CheckText("comment time", c.Time, false, maxShortText); err != nil {
				return err
			}
			if err := checkProse("comment body", c.Body, true, maxCommentBody); err != nil {
				return err
			}
		}
		if err := idx.checkComponent(&t); err != nil {
			return err
		}
		if seen[t.ID] {
			return signoff.Errorf(signoff.EINVALID, "ticket %s is listed twice", t.ID)
		}
		seen[t.ID] = true
		tickets[i] = t
	}
	crashes := slices.Clone(d.Crashes)
	if crashes == nil {
		crashes = []signoff.CrashEvent{}
	}
	if err := normCrashes(crashes); err != nil {
		return err
	}
	rel := d.Releases
	rel.Releases, rel.ActiveUsersByVersion = slices.Clone(rel.Releases), cloneMap(rel.ActiveUsersByVersion)
	hasReleases := !releasesEmpty(rel)
	if err := normReleases(&rel); err != nil {
		return err
	}
	relDoc, err := canonical.Marshal(rel)
	if err != nil {
		return err
	}
	digests := map[string]string{"releases": sha256Hex(relDoc)}
	digests["crashes"] = crashDigest(crashes)
	for k, v := range map[string]any{"tickets": tickets, "owners": owners} {
		if digests[k], err = canonical.Digest(v); err != nil {
			return err
		}
	}
	now := micros(s.clock())
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		for _, table := range []string{"tickets", "crash_events", "project_releases"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE project_id = $1`, projectID); err != nil {
				return err
			}
		}
		if err := s.replaceOwners(ctx, tx, by.WorkspaceID, projectID, owners); err != nil {
			return err
		}
		if err := s.insertRows(ctx, tx, "tickets", ticketInsertColumns, len(tickets), func(i int, dst []any) ([]any, error) {
			dst, err := ticketRow(dst, tickets[i])
			return append(dst, by.WorkspaceID, projectID, int64(i+1), by.ID, now, now), err
		}); err != nil {
			return err
		}
		if _, err := s.insertCrashes(ctx, tx, by.WorkspaceID, projectID, crashes); err != nil {
			return err
		}
		if hasReleases {
			if err := s.putReleases(ctx, tx, by, projectID, relDoc); err != nil {
				return err
			}
		}
		_, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "project.data_imported", by.ID, map[string]any{
			"project_id": projectID,
			"counts":     map[string]int{"tickets": len(tickets), "crashes": len(crashes), "owners": len(owners), "releases": len(rel.Releases)},
			"sha256":     digests,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("import project data: %w", err)
	}
	return nil
}

// insertRows inserts n rows into table, many rows per statement (a
// prepared statement reused for every full chunk), so that large imports
// make a few hundred round trips instead of one per row. row appends row
// i's values, in cols order, to dst.
//
// SQLite gets anonymous "?" parameters: the driver looks each numbered one
// up by name, which costs time quadratic in the parameters of a statement.
func (s *DB) insertRows(ctx context.Context, tx *sql.Tx, table string, cols []string, n int, row func(i int, dst []any) ([]any, error)) error {
	numbered := s.d.Name != "sqlite"
	if n == 0 {
		return nil
	}
	// Under SQLite's (32,766) and PostgreSQL's (65,535) parameter limits.
	per := max(1, min(1000, 30000/len(cols)))
	var stmt *sql.Stmt
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	stmtRows := 0
	args := make([]any, 0, min(n, per)*len(cols))
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		args = args[:0]
		for i := lo; i < hi; i++ {
			var err error
			if args, err = row(i, args); err != nil {
				return err
			}
		}
		if hi-lo == n {
			// One statement in all: preparing it would cost PostgreSQL an
			// extra round trip.
			if _, err := tx.ExecContext(ctx, insertSQL(table, cols, n, numbered), args...); err != nil {
				return fmt.Errorf("insert into %s: %w", table, err)
			}
			return nil
		}
		if hi-lo != stmtRows {
			if stmt != nil {
				stmt.Close()
			}
			var err error
			if stmt, err = tx.PrepareContext(ctx, insertSQL(table, cols, hi-lo, numbered)); err != nil {
				return fmt.Errorf("insert into %s: prepare: %w", table, err)
			}
			stmtRows = hi - lo
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

func insertSQL(table string, cols []string, rows int, numbered bool) string {
	var b strings.Builder
	b.Grow(rows * len(cols) * 7)
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(cols, ", "))
	p := 1
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			if !numbered {
				b.WriteByte('?')
				continue
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(p))
			p++
		}
		b.WriteByte(')')
	}
	return b.String()
}
