package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
)

func checkProject(in signoff.ProjectInput) error {
	if err := signoff.CheckText("project name", in.Name, true, 100); err != nil {
		return err
	}
	if err := signoff.CheckText("repo_url", in.RepoURL, false, 2048); err != nil {
		return err
	}
	if in.RepoURL != "" {
		// Later capabilities hand this to git: only schemes git should
		// fetch from here, or an absolute local path. No options ("-..."),
		// no credentials in the URL.
		u, err := url.Parse(in.RepoURL)
		switch {
		case err != nil:
			return signoff.Errorf(signoff.EINVALID, "repo_url is not a valid URL or path")
		case u.Scheme == "" && strings.HasPrefix(in.RepoURL, "/"):
		case u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "ssh" && u.Scheme != "git" && u.Scheme != "file":
			return signoff.Errorf(signoff.EINVALID, "repo_url must be an https, http, ssh, git or file URL, or an absolute path")
		case u.User != nil && u.Scheme != "ssh":
			return signoff.Errorf(signoff.EINVALID, "repo_url must not carry credentials")
		}
	}
	return signoff.CheckText("description", in.Description, false, 2000)
}

// CreateProject implements signoff.ProjectService.
func (s *DB) CreateProject(ctx context.Context, by signoff.Actor, in signoff.ProjectInput) (signoff.Project, error) {
	if err := checkProject(in); err != nil {
		return signoff.Project{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	p := signoff.Project{ID: signoff.NewID(signoff.PrefixProject), WorkspaceID: by.WorkspaceID, Name: in.Name, RepoURL: in.RepoURL, Description: in.Description, CreatedAt: now, UpdatedAt: now}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, repo_url, description, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
			p.ID, p.WorkspaceID, p.Name, p.RepoURL, p.Description, micros(now))
		if err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "a project named %q already exists", p.Name)
			}
			return err
		}
		_, err = s.appendEvent(ctx, tx, p.WorkspaceID, "", "project.created", by.ID, map[string]any{"project_id": p.ID, "name": p.Name, "repo_url": p.RepoURL, "description": p.Description})
		return err
	})
	if err != nil {
		return signoff.Project{}, fmt.Errorf("create project %q: %w", in.Name, err)
	}
	return p, nil
}

const projectColumns = `id, workspace_id, name, repo_url, description, created_at, updated_at`

func scanProject(sc scanner, p *signoff.Project) error {
	var c, u int64
	if err := sc.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.RepoURL, &p.Description, &c, &u); err != nil {
		return err
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(c), fromMicros(u)
	return nil
}

// GetProject implements signoff.ProjectService.
func (s *DB) GetProject(ctx context.Context, ws, id string) (signoff.Project, error) {
	if err := signoff.CheckID("project", signoff.PrefixProject, id); err != nil {
		return signoff.Project{}, err
	}
	return s.getProject(ctx, s.db, ws, id)
}

func (s *DB) getProject(ctx context.Context, q queryer, ws, id string) (signoff.Project, error) {
	var p signoff.Project
	err := scanProject(q.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = $1 AND workspace_id = $2`, id, ws), &p)
	if errors.Is(err, sql.ErrNoRows) {
		return p, signoff.Errorf(signoff.ENOTFOUND, "project not found")
	} else if err != nil {
		return p, fmt.Errorf("get project %s: %w", id, err)
	}
	return p, nil
}

// ListProjects implements signoff.ProjectService.
func (s *DB) ListProjects(ctx context.Context, ws string) ([]signoff.Project, error) {
	out, err := queryAll(ctx, s.db, scanProject, `SELECT `+projectColumns+` FROM projects WHERE workspace_id = $1 ORDER BY id`, ws)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// UpdateProject implements signoff.ProjectService. The read, merge and
// write happen in one transaction under the row's lock, so two patches of
// different fields never lose each other.
func (s *DB) UpdateProject(ctx context.Context, by signoff.Actor, id string, patch signoff.ProjectPatch) (signoff.Project, error) {
	if err := signoff.CheckID("project", signoff.PrefixProject, id); err != nil {
		return signoff.Project{}, err
	}
	var p signoff.Project
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		err := scanProject(tx.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = $1 AND workspace_id = $2`+s.d.ForUpdate, id, by.WorkspaceID), &p)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "project not found")
		} else if err != nil {
			return err
		}
		in := signoff.ProjectInput{Name: p.Name, RepoURL: p.RepoURL, Description: p.Description}
		for _, f := range []struct{ dst, src *string }{{&in.Name, patch.Name}, {&in.RepoURL, patch.RepoURL}, {&in.Description, patch.Description}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if in == (signoff.ProjectInput{Name: p.Name, RepoURL: p.RepoURL, Description: p.Description}) {
			return nil // nothing changes, nothing to record
		}
		if err := checkProject(in); err != nil {
			return err
		}
		p.Name, p.RepoURL, p.Description, p.UpdatedAt = in.Name, in.RepoURL, in.Description, s.now().UTC().Truncate(time.Microsecond)
		if _, err := tx.ExecContext(ctx, `UPDATE projects SET name = $1, repo_url = $2, description = $3, updated_at = $4 WHERE id = $5`,
			p.Name, p.RepoURL, p.Description, micros(p.UpdatedAt), id); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "a project named %q already exists", in.Name)
			}
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "project.updated", by.ID, map[string]any{"project_id": id, "name": p.Name, "repo_url": p.RepoURL, "description": p.Description})
		return err
	})
	if err != nil {
		return signoff.Project{}, fmt.Errorf("update project %s: %w", id, err)
	}
	return p, nil
}
