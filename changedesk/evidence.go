package changedesk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/passkey"
)

// ExportEvidence returns the evidence of a change case as a gzip'd tar of
// an evidence change bundle (evidence.WriteChangeBundle): the current
// plan as stored, its review, the policy, every approval of the plan's
// digest with its approver's registered key, and every receipt, signed
// with the server's key so that `signoff evidence verify` checks it
// offline. People who may read the case may export it (owners, operators,
// viewers); agents may not. The same case exports to the same bytes while
// nothing about it changes.
func (d *Desk) ExportEvidence(ctx context.Context, by signoff.Actor, caseID string) ([]byte, error) {
	if !staff(by) && by.Role != signoff.RoleViewer {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not export evidence", by.Role)
	}
	if len(d.Key) == 0 {
		return nil, signoff.Errorf(signoff.EUNAVAILABLE, "this server has no signing key, so it cannot sign an evidence bundle")
	}
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return nil, err
	}
	ws := c.WorkspaceID
	if l.State.PlanID == "" {
		return nil, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s has no plan yet: there is no evidence to export", c.ID)}
	}
	plan, err := d.Store.GetPlan(ctx, sys(ws), l.State.PlanID)
	if err != nil {
		return nil, err
	}
	// The policy the plan was reviewed (and approved) under, as the case
	// recorded it; the workspace's policy may have changed since.
	policy := []byte(l.State.PolicyYAML)
	if l.State.PolicyYAML == "" {
		switch rec, err := d.Store.GetChangePolicy(ctx, sys(ws)); {
		case err == nil:
			policy = []byte(rec.YAML)
		case signoff.ErrorCode(err) != signoff.ENOTFOUND:
			return nil, err
		}
	}
	in := evidence.ChangeBundleInput{
		Case: evidence.ChangeCase{Case: c.ID, ProjectID: c.ProjectID, State: c.State, Title: c.Title, Reason: l.State.Reason,
			Opener: l.State.Opener, Incident: l.State.Incident, RevertOf: l.State.RevertOf, RevertedBy: l.State.RevertedBy,
			PlanID: plan.ID, PlanDigest: l.State.PlanDigest, Proposer: plan.Proposer, Via: plan.Via,
			ApprovedDigest: l.State.ApprovedDigest, ApprovedPolicyDigest: l.State.ApprovedPolicyDigest, Preapproved: l.State.Preapproved},
		Plan: plan.Body, Review: l.State.Review, Policy: policy,
	}
	if len(in.Review) == 0 {
		in.Review = []byte("null")
	}
	apvs, err := d.Store.ListApprovals(ctx, sys(ws), c.ID)
	if err != nil {
		return nil, err
	}
	seenKey := map[string]bool{}
	for _, a := range apvs {
		// Approvals of an earlier plan name another digest: they belong
		// to that plan, which this bundle does not carry.
		if a.SubjectDigest != l.State.PlanDigest {
			continue
		}
		in.Approvals = append(in.Approvals, evidence.BundleApproval{ID: a.ID, Approver: a.ApproverID, KeyID: a.KeyID,
			Decision: a.Decision, Status: a.Status, Via: a.Via, Envelope: a.Envelope})
		if seenKey[a.KeyID] {
			continue
		}
		seenKey[a.KeyID] = true
		k, err := d.Store.GetKey(ctx, ws, a.KeyID)
		if err != nil {
			return nil, fmt.Errorf("key %s of approval %s: %w", a.KeyID, a.ID, err)
		}
		if passkey.IsCredential(k.PublicKey) {
			// A passkey: its credential (COSE key, id, RP id) goes in as
			// registered, for evidence verify to check the assertion.
			in.Keys = append(in.Keys, evidence.BundleKey{Actor: k.ActorID, Passkey: k.PublicKey})
			continue
		}
		pub, err := keys.ParsePublic([]byte(k.PublicKey))
		if err != nil {
			return nil, fmt.Errorf("key %s of approval %s: %w", a.KeyID, a.ID, err)
		}
		in.Keys = append(in.Keys, evidence.BundleKey{Actor: k.ActorID, Public: pub})
	}
	rs, err := d.Store.ListReceipts(ctx, sys(ws), c.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		in.Receipts = append(in.Receipts, evidence.BundleReceipt{ID: r.ID, Kind: r.Kind, Digest: r.Digest, Envelope: r.Envelope})
	}

	tmp, err := os.MkdirTemp("", "signoff-change-evidence-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "bundle")
	if err := evidence.WriteChangeBundle(dir, in, d.Key); err != nil {
		return nil, fmt.Errorf("write the evidence of %s: %w", c.ID, err)
	}
	return evidence.Pack(dir)
}
