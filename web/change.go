package web

import (
	"context"

	"github.com/signoff-dev/signoff"
)

// changeView is the change section of a case page.
type changeView struct{}

// changeSection reads what a change case's page shows.
func (s *server) changeSection(ctx context.Context, by signoff.Actor, c signoff.Case) (*changeView, error) {
	return nil, nil
}

func (s *server) changeRoutes() {}
