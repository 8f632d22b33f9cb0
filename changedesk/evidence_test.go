package changedesk_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/evidence"
)

// untar unpacks an exported bundle into a fresh directory.
func untar(t *testing.T, archive []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	must(t, err)
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		must(t, err)
		if hdr.Typeflag != tar.TypeReg || strings.Contains(hdr.Name, "..") {
			t.Fatalf("bundle entry %q (type %c)", hdr.Name, hdr.Typeflag)
		}
		b, err := io.ReadAll(tr)
		must(t, err)
		dst := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		must(t, os.WriteFile(dst, b, 0o644))
	}
}

func (e *env) export(caseID string) string {
	e.t.Helper()
	archive, err := e.desk.ExportEvidence(e.ctx, e.owner, caseID)
	must(e.t, err)
	return untar(e.t.(*testing.T), archive)
}

func (e *env) verifyExport(t *testing.T, caseID string) evidence.Findings {
	t.Helper()
	f, err := evidence.VerifyBundle(e.export(caseID), []ed25519.PublicKey{e.serverKey.Public().(ed25519.PublicKey)})
	must(t, err)
	if !f.OK() || f.Kind != evidence.KindChange || f.Change == nil || f.Change.Case != caseID {
		t.Fatalf("bundle of %s (kind %s):\n%s", caseID, f.Kind, f)
	}
	return f
}

// The constants package evidence repeats (it cannot import these
// packages) stay the ones they repeat.
func TestEvidenceConstantsMatch(t *testing.T) {
	if evidence.PredicateChangeReceipt != changedesk.ReceiptPredicate || evidence.ApprovalPayloadType != approval.PayloadType {
		t.Fatalf("evidence repeats %q and %q; changedesk and approval say %q and %q",
			evidence.PredicateChangeReceipt, evidence.ApprovalPayloadType, changedesk.ReceiptPredicate, approval.PayloadType)
	}
}

func TestExportEvidenceVerifiesOffline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\n"))

	// Before execution: the plan, its review and the approval, no receipt.
	c := e.request("false")
	e.approve(e.alice, c.ID)
	f := e.verifyExport(t, c.ID)
	if len(f.Change.Receipts) != 0 || len(f.Change.Approvals) != 1 || !f.Change.Approvals[0].Verified {
		t.Fatalf("before execution: %+v", f.Change)
	}

	// Executed, health passed.
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeExecuted {
		t.Fatalf("outcome %s", x.Outcome)
	}
	archive, err := e.desk.ExportEvidence(e.ctx, e.owner, c.ID)
	must(t, err)
	again, err := e.desk.ExportEvidence(e.ctx, e.owner, c.ID)
	must(t, err)
	if !bytes.Equal(archive, again) {
		t.Error("two exports of an unchanged case differ")
	}
	dir := untar(t, archive)
	pub := e.serverKey.Public().(ed25519.PublicKey)
	f, err = evidence.VerifyBundle(dir, []ed25519.PublicKey{pub})
	must(t, err)
	if !f.OK() || f.Kind != evidence.KindChange {
		t.Fatalf("findings:\n%s", f)
	}
	if r := f.Change.Receipts; len(r) != 1 || r[0].ID != x.Receipt.ID || r[0].Outcome != changedesk.OutcomeExecuted || !r[0].HealthPassed ||
		r[0].Probes != 3 || !r[0].Verified || !slices.Equal(r[0].Approvals, []string{f.Change.Approvals[0].ID}) {
		t.Fatalf("receipts %+v", r)
	}
	for _, want := range []string{"case", "plan digest", "policy digest", "review", "approval " + f.Change.Approvals[0].ID,
		"receipt " + x.Receipt.ID, "receipt " + x.Receipt.ID + " health", "plan.json", "policy.yaml", "statements/change.dsse.json"} {
		if !slices.ContainsFunc(f.Items, func(it evidence.Finding) bool { return it.Item == want && it.Status == evidence.StatusOK }) {
			t.Errorf("no ok finding for %s:\n%s", want, f)
		}
	}
	if u := f.With(evidence.StatusUnchecked); len(u) != 1 || u[0].Item != "execution" {
		t.Errorf("unchecked = %+v", u)
	}

	// Under another key nothing is authentic: the statement and the
	// receipt both fail.
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	f, err = evidence.VerifyBundle(dir, []ed25519.PublicKey{other.Public().(ed25519.PublicKey)})
	must(t, err)
	if f.OK() || !slices.ContainsFunc(f.With(evidence.StatusFailed), func(it evidence.Finding) bool {
		return it.Item == "statements/change.dsse.json" && strings.Contains(it.Detail, "signature")
	}) {
		t.Fatalf("verified under another key:\n%s", f)
	}

	// The compensating rollback is pre-approved: no approvals, a receipt
	// that says so, and the original case now reverted.
	rc, rx, err := e.desk.Rollback(e.ctx, e.alice, c.ID, "roll back the change, it was only a drill")
	must(t, err)
	if rx == nil {
		t.Fatal("the pre-approved rollback did not run")
	}
	f = e.verifyExport(t, rc.ID)
	if r := f.Change.Receipts; len(f.Change.Approvals) != 0 || len(r) != 1 || r[0].Kind != signoff.ReceiptRollback || !r[0].Preapproved {
		t.Fatalf("rollback bundle %+v", f.Change)
	}
	if f = e.verifyExport(t, c.ID); f.Change.State != "reverted" {
		t.Fatalf("original after rollback: %+v", f.Change)
	}
}

// A change whose health check fails is rolled back; its bundle shows the
// failing probe and still verifies.
func TestExportEvidenceOfARolledBackChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("true")
	e.approve(e.bob, c.ID)
	x, err := e.desk.Execute(e.ctx, e.bob, c.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeRolledBack {
		t.Fatalf("outcome %s", x.Outcome)
	}
	f := e.verifyExport(t, c.ID)
	r := f.Change.Receipts
	if len(r) != 1 || r[0].Outcome != changedesk.OutcomeRolledBack || r[0].HealthPassed || !strings.Contains(r[0].Health, "status 500") {
		t.Fatalf("receipts %+v", r)
	}
}

func TestExportEvidenceRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "checkout fails with 500s since the v2 flow went live"})
	must(t, err)
	if _, err := e.desk.ExportEvidence(e.ctx, e.owner, c.ID); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("export without a plan: %v", err)
	}
	planner, err := e.store.CreateActor(e.ctx, e.owner, "planner", signoff.RolePlanner)
	must(t, err)
	if _, err := e.desk.ExportEvidence(e.ctx, planner, c.ID); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("export by an agent: %v", err)
	}
	viewer, err := e.store.CreateActor(e.ctx, e.owner, "vera", signoff.RoleViewer)
	must(t, err)
	p := e.request("false")
	if _, err := e.desk.ExportEvidence(e.ctx, viewer, p.ID); err != nil {
		t.Fatalf("export by a viewer: %v", err)
	}
	noKey := *e.desk
	noKey.Key = nil
	if _, err := noKey.ExportEvidence(e.ctx, e.owner, p.ID); signoff.ErrorCode(err) != signoff.EUNAVAILABLE {
		t.Fatalf("export without a key: %v", err)
	}
}
