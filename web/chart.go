package web

func (s *server) chartRoutes() {}
