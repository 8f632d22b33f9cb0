package notify_test

import (
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/mail/smtptest"
)

// TestReporterMailQuestion: the notice of a case that needs information
// carries the question triage asked, in the reporter's language, as the
// airlock let it through; it carries none of the report, and the
// question asked later is not put in an earlier notice.
func TestReporterMailQuestion(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := smtptest.Start(t, smtptest.Options{})
	host, port := srv.Addr()
	k.d.SMTPTLS = srv.ClientTLS()
	ch := k.channel(signoff.ChannelInput{Name: "mail", Kind: signoff.ChannelEmail,
		Settings: signoff.ChannelSettings{SMTPHost: host, SMTPPort: port, From: "signoff@example.com"}})
	c, _, _, err := k.s.SubmitReport(k.ctx, signoff.ReportInput{ProjectID: k.proj.ID, Text: "la app se cierra SECRET-DETAIL", Contact: "rita@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	tri, err := k.s.CreateActor(k.ctx, k.owner, "triager", signoff.RoleTriager)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.s.TransitionCase(k.ctx, k.owner, c.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.s.CreateTask(k.ctx, k.owner, signoff.TaskInput{CaseID: c.ID, Kind: "writer", Role: signoff.RoleTriager, AssigneeID: tri.ID,
		Input: json.RawMessage(`{"case_id":"` + c.ID + `"}`)}); err != nil {
		t.Fatal(err)
	}
	question := "Hola: ¿qué modelo de teléfono usas?\nEscríbenos también a rita@example.com."
	if _, err := k.s.RequestInfo(k.ctx, tri, c.ID, signoff.InfoRequest{Question: question, Language: "es"}); err != nil {
		t.Fatal(err)
	}
	if ds := k.deliverAll(ch); len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("deliveries = %+v", ds)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("received %d mails", len(msgs))
	}
	raw := string(msgs[0].Data)
	body, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(raw[strings.Index(raw, "\r\n\r\n")+4:])))
	text := strings.ReplaceAll(string(body), "\r\n", "\n")
	if !strings.Contains(text, "> Hola: ¿qué modelo de teléfono usas?\n> Escríbenos también a [email].") {
		t.Fatalf("the notice does not quote the question:\n%s", text)
	}
	if strings.Contains(text, "SECRET-DETAIL") || strings.Count(raw+text, "rita@example.com") != strings.Count(raw, "rita@example.com") {
		t.Fatalf("the notice carries the report or an address from the question:\n%s", text)
	}
}
