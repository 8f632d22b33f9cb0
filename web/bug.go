package web

import (
	"context"
	"net/http"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
)

type bugView struct{}

func (s *server) bugSection(ctx context.Context, by signoff.Actor, c signoff.Case) (*bugView, error) {
	return nil, nil
}

type decisionView struct{}

func (s *server) decisions(ctx context.Context, by signoff.Actor, c signoff.Case) ([]decisionView, error) {
	return nil, nil
}

func (s *server) decide(w http.ResponseWriter, r *http.Request, sess sqlstore.WebSession) error {
	return nil
}
