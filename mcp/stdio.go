package mcp

import (
	"context"
	"errors"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
)

// ServeStdio authenticates token as an agent and serves MCP on in and out
// in the stdio wire format (newline-delimited JSON-RPC) until the client
// closes in or ctx ends; either way it returns nil. A bad token is
// EUNAUTHORIZED and a person's EFORBIDDEN, before anything is read; the
// caller turns the code into an exit code (signoff.Mapping).
func ServeStdio(ctx context.Context, st signoff.Store, token string, o Options, in io.Reader, out io.Writer) error {
	token = strings.TrimSpace(token)
	if token == "" {
		return signoff.Errorf(signoff.EUNAUTHORIZED, "an agent token is required")
	}
	by, err := st.Authenticate(ctx, token)
	if err != nil {
		return err
	}
	o = o.withDefaults()
	srv, err := newServer(st, by, o, newShared())
	if err != nil {
		return err
	}
	srv.AddReceivingMiddleware(reauthenticate(st, token))
	err = srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, sdk.ErrConnectionClosed):
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil
	}
	return err
}

// reauthenticate checks the token again before every tool call: a stdio
// session lives as long as its client, and a token revoked or an agent
// disabled meanwhile must stop working with the next call, as it does on
// the API (whose every request authenticates).
func reauthenticate(st signoff.Store, token string) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/call" {
				if _, err := st.Authenticate(ctx, token); err != nil {
					return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
						Text: signoff.ErrorCode(err) + ": " + signoff.ErrorMessage(err)}}}, nil
				}
			}
			return next(ctx, method, req)
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
