package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/workflow"
)

// IntakeActor is how the ledger names the public intake form: nobody
// authenticated sent the report.
const IntakeActor = "public-intake"

// titleOf is the first non-blank line of the sanitized text, shortened.
func titleOf(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > 120 {
			r := []rune(line)
			line = string(r[:119]) + "…"
		}
		return line
	}
	return "(report without text)"
}

// SubmitReport implements signoff.IntakeService.
func (s *DB) SubmitReport(ctx context.Context, in signoff.ReportInput) (signoff.Case, signoff.Report, string, error) {
	if err := signoff.CheckID("project", signoff.PrefixProject, in.ProjectID); err != nil {
		return signoff.Case{}, signoff.Report{}, "", err
	}
	d, meta, err := s.intake.Report(in)
	if err != nil {
		return signoff.Case{}, signoff.Report{}, "", err
	}
	linkID, secret, hash := identity.NewTracking()
	now := s.now().UTC().Truncate(time.Microsecond)
	c := signoff.Case{
		ID: signoff.NewID(signoff.PrefixCase), ProjectID: in.ProjectID, Kind: signoff.KindBug, Title: titleOf(d.Text),
		State: workflow.Bug.Initial, Version: 1, MaxFixAttempts: DefaultMaxFixAttempts, ReporterID: linkID,
		CreatedBy: IntakeActor, CreatedAt: now, UpdatedAt: now,
	}
	r := signoff.Report{ID: signoff.NewID(signoff.PrefixReport), CaseID: c.ID, Kind: "report", Dossier: d, Metadata: meta, CreatedAt: now}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT workspace_id FROM projects WHERE id = $1`, in.ProjectID).Scan(&c.WorkspaceID)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "project not found")
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cases (id, workspace_id, project_id, kind, title, state, version, fix_attempts, max_fix_attempts, reporter_id, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
			c.ID, c.WorkspaceID, c.ProjectID, string(c.Kind), c.Title, c.State, c.Version, c.FixAttempts, c.MaxFixAttempts, c.ReporterID, c.CreatedBy, micros(now)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tracking_links (id, workspace_id, case_id, secret_sha256, created_at) VALUES ($1, $2, $3, $4, $5)`,
			linkID, c.WorkspaceID, c.ID, hash, micros(now)); err != nil {
			return err
		}
		if err := s.insertReporterText(ctx, tx, c.WorkspaceID, r, in.Text, in.Contact); err != nil {
			return err
		}
		// The triage job first: the ledger head is locked from the append
		// until commit, so nothing that can come before it goes after.
		if err := s.enqueue(ctx, tx, signoff.TriageJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID}); err != nil {
			return err
		}
		_, err = s.appendEvents(ctx, tx, c.WorkspaceID, []EventInput{
			{CaseID: c.ID, Type: "case.created", ActorID: IntakeActor, Payload: map[string]any{
				"project_id": c.ProjectID, "kind": string(c.Kind), "title": c.Title, "state": c.State, "version": c.Version, "reporter_id": c.ReporterID}},
			{CaseID: c.ID, Type: "report.received", ActorID: IntakeActor, Payload: reportPayload(r)},
		})
		return err
	})
	if err != nil {
		return signoff.Case{}, signoff.Report{}, "", fmt.Errorf("submit report: %w", err)
	}
	return c, r, secret, nil
}

// reportPayload is what the ledger keeps of reporter text: the dossier, never
// the original or the contact.
func reportPayload(r signoff.Report) map[string]any {
	return map[string]any{"report_id": r.ID, "kind": r.Kind, "text": r.Dossier.Text, "redactions": r.Dossier.Redactions,
		"signals": r.Dossier.Signals, "instruction_suspected": r.Dossier.InstructionSuspected,
		"removed_invisible": r.Dossier.RemovedInvisible, "metadata": r.Metadata}
}

func (s *DB) insertReporterText(ctx context.Context, tx *sql.Tx, ws string, r signoff.Report, original, contact string) error {
	dossier, err := json.Marshal(r.Dossier)
	if err != nil {
		return err
	}
	meta, err := json.Marshal(r.Metadata)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO reporter_texts (id, workspace_id, case_id, kind, original, contact, dossier, metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		r.ID, ws, r.CaseID, r.Kind, strings.ToValidUTF8(original, "\uFFFD"), strings.ToValidUTF8(contact, "\uFFFD"), string(dossier), string(meta), micros(r.CreatedAt))
	return err
}

// errNoCase is the single answer for every bad tracking secret, so the
// response says nothing about which part was wrong.
var errNoCase = signoff.Errorf(signoff.ENOTFOUND, "no case for this link")

// resolveLink returns the workspace and case a tracking secret is bound to.
func (s *DB) resolveLink(ctx context.Context, q queryer, secret string) (ws, caseID, linkID string, err error) {
	linkID, ok := identity.ParseTracking(secret)
	if !ok {
		return "", "", "", errNoCase
	}
	var hash []byte
	var revoked sql.NullInt64
	err = q.QueryRowContext(ctx, `SELECT workspace_id, case_id, secret_sha256, revoked_at FROM tracking_links WHERE id = $1`, linkID).Scan(&ws, &caseID, &hash, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		identity.SecretMatches(secret, dummyHash)
		return "", "", "", errNoCase
	} else if err != nil {
		return "", "", "", fmt.Errorf("resolve tracking link: %w", err)
	}
	if !identity.SecretMatches(secret, hash) || revoked.Valid {
		return "", "", "", errNoCase
	}
	return ws, caseID, linkID, nil
}

// Track implements signoff.IntakeService.
func (s *DB) Track(ctx context.Context, secret string) (signoff.Tracking, error) {
	ws, caseID, _, err := s.resolveLink(ctx, s.db, secret)
	if err != nil {
		return signoff.Tracking{}, err
	}
	c, err := s.getCase(ctx, s.db, ws, caseID)
	if err != nil {
		return signoff.Tracking{}, err
	}
	t := signoff.Tracking{CaseID: c.ID, Title: c.Title, State: c.State, Question: workflow.ReporterQuestion(c.State), UpdatedAt: c.UpdatedAt}
	if err := s.trackHistory(ctx, s.db, ws, &t); err != nil {
		return signoff.Tracking{}, err
	}
	return t, nil
}

// ListReports implements signoff.IntakeService.
func (s *DB) ListReports(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.Report, error) {
	if _, err := s.GetCase(ctx, by, caseID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanReport, `SELECT id, case_id, kind, original, contact, dossier, metadata, created_at
		FROM reporter_texts WHERE workspace_id = $1 AND case_id = $2 ORDER BY id`, by.WorkspaceID, caseID)
	if err != nil {
		return nil, fmt.Errorf("list reports of %s: %w", caseID, err)
	}
	if by.Role != signoff.RoleOwner {
		for i := range out {
			out[i].Original, out[i].Contact = "", ""
		}
	}
	return out, nil
}

func scanReport(sc scanner, r *signoff.Report) error {
	var dossier, meta []byte
	var at int64
	if err := sc.Scan(&r.ID, &r.CaseID, &r.Kind, &r.Original, &r.Contact, &dossier, &meta, &at); err != nil {
		return err
	}
	r.CreatedAt = fromMicros(at)
	if err := json.Unmarshal(dossier, &r.Dossier); err != nil {
		return err
	}
	return json.Unmarshal(meta, &r.Metadata)
}
