package storetest

import (
	"crypto/ed25519"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
)

// Revoking approval keys, disabling and enabling actors, and approval keys
// scoped to their workspace.

// approvalStatuses reads the statuses of a case's approvals by id.
func (k *loopKit) approvalStatuses(t *testing.T, caseID string) map[string]string {
	t.Helper()
	list, err := k.store.ListApprovals(k.ctx, k.owner, caseID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range list {
		out[a.ID] = a.Status
	}
	return out
}

// wantStatuses fails unless every approval in want has its status.
func (k *loopKit) wantStatuses(t *testing.T, want map[string]string, caseIDs ...string) {
	t.Helper()
	got := map[string]string{}
	for _, c := range caseIDs {
		for id, st := range k.approvalStatuses(t, c) {
			got[id] = st
		}
	}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("approval %s is %q, want %q", id, got[id], st)
		}
	}
}

// voidedEvents returns the approvals.voided events of the workspace by
// case id.
func (k *loopKit) voidedEvents(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, e := range k.eventsOf(t, "approvals.voided") {
		if _, dup := out[e.CaseID]; dup {
			t.Fatalf("two approvals.voided events for case %s", e.CaseID)
		}
		out[e.CaseID] = payloadOf(t, e)
	}
	return out
}

func idsOf(p map[string]any) []string {
	var out []string
	for _, v := range p["approval_ids"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

// testKeyRevoke: a key's holder or an owner revokes it; its valid
// approvals are voided in the same transaction, with one event per case;
// consumed and superseded ones keep their status; a revoked key signs
// nothing more and a voided approval is never consumed.
func testKeyRevoke(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	op2 := k.approver(t, "op2", signoff.RoleOperator)
	c1, c2 := k.bug(t, ""), k.bug(t, "")
	l1, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c1.ID})
	used := k.record(t, k.sys, k.approval(c1, op, digestHex("1"), time.Hour))
	l1, _ = k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c1.ID, Version: l1.Version, Consume: []string{used.ID}})
	old := k.record(t, k.sys, k.approval(c1, op, digestHex("2"), time.Hour))
	if _, err := s.SupersedeApprovals(ctx, k.sys, c1.ID, digestHex("3")); err != nil {
		t.Fatal(err)
	}
	a1 := k.record(t, k.sys, k.approval(c1, op, digestHex("3"), time.Hour))
	a2 := k.record(t, k.sys, k.approval(c2, op, digestHex("4"), time.Hour))
	other := k.record(t, k.sys, k.approval(c1, op2, digestHex("3"), time.Hour))
	_, foreignOwner, err := s.CreateWorkspace(ctx, "Globex", "gina")
	if err != nil {
		t.Fatal(err)
	}

	refusals := []struct {
		name string
		by   signoff.Actor
		key  string
		code string
	}{
		{"viewer", k.actor(t, "vi", signoff.RoleViewer), op.keyID, signoff.EFORBIDDEN},
		{"agent", k.actor(t, "fix", signoff.RoleFixer), op.keyID, signoff.EFORBIDDEN},
		{"system", k.sys, op.keyID, signoff.EFORBIDDEN},
		{"another operator's key", op2.actor, op.keyID, signoff.ENOTFOUND},
		{"another workspace's owner", foreignOwner, op.keyID, signoff.ENOTFOUND},
		{"unknown key", k.owner, "0123456789abcdef", signoff.ENOTFOUND},
		{"malformed id", k.owner, "../../x", signoff.EINVALID},
	}
	before := k.head(t)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, _, err := s.RevokeKey(ctx, r.by, r.key)
			wantCode(t, err, r.code)
		})
	}
	k.unchanged(t, before, "refused revocations")

	// The holder revokes their own key.
	key, n, err := s.RevokeKey(ctx, op.actor, op.keyID)
	if err != nil || n != 2 || key.ID != op.keyID || key.RevokedAt == nil || !key.RevokedAt.Equal(k.clock.Now()) {
		t.Fatalf("RevokeKey = %+v, %d, %v; want the key revoked now and 2 approvals voided", key, n, err)
	}
	if got, err := s.GetKey(ctx, k.ws.ID, op.keyID); err != nil || got.RevokedAt == nil {
		t.Fatalf("GetKey after revoke = %+v, %v", got, err)
	}
	k.wantStatuses(t, map[string]string{
		used.ID: signoff.ApprovalConsumed, old.ID: signoff.ApprovalSuperseded,
		a1.ID: signoff.ApprovalVoided, a2.ID: signoff.ApprovalVoided, other.ID: signoff.ApprovalValid,
	}, c1.ID, c2.ID)
	_, _, err = s.RevokeKey(ctx, k.owner, op.keyID)
	wantCode(t, err, signoff.ECONFLICT)
	// A revoked key is not registered again: the holder makes a new one.
	revokedPEM, err := keys.EncodePublic(op.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.RegisterKey(ctx, op.actor, string(revokedPEM))
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), "revoked") {
		t.Fatalf("re-registering a revoked key: %q", signoff.ErrorMessage(err))
	}

	// The ledger says what happened, and each affected case says that
	// its approvals no longer count.
	revoked := k.eventsOf(t, "key.revoked")
	if len(revoked) != 1 || revoked[0].ActorID != op.actor.ID || revoked[0].CaseID != "" {
		t.Fatalf("key.revoked events %+v", revoked)
	}
	if p := payloadOf(t, revoked[0]); p["key_id"] != op.keyID || p["actor_id"] != op.actor.ID {
		t.Fatalf("key.revoked payload %v", p)
	}
	voided := k.voidedEvents(t)
	for c, want := range map[string]string{c1.ID: a1.ID, c2.ID: a2.ID} {
		p := voided[c]
		if p == nil || p["reason"] != "key revoked" || p["key_id"] != op.keyID || p["count"] != 1.0 || strings.Join(idsOf(p), ",") != want ||
			p["message"] != "approvals signed with key "+op.keyID+" no longer count: the key was revoked" {
			t.Fatalf("approvals.voided of case %s = %v, want %s voided because the key was revoked", c, p, want)
		}
	}
	if len(voided) != 2 {
		t.Fatalf("%d approvals.voided events, want 2", len(voided))
	}

	// A voided approval is never consumed, and the key signs nothing new.
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c1.ID, Version: l1.Version, Consume: []string{a1.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	_, err = s.RecordApproval(ctx, k.sys, k.approval(c1, op, digestHex("3"), time.Hour))
	wantCode(t, err, signoff.EINVALID)
	// Superseding leaves voided approvals as they are.
	if n, err := s.SupersedeApprovals(ctx, k.sys, c1.ID, ""); err != nil || n != 1 {
		t.Fatalf("SupersedeApprovals = %d, %v; want only op2's valid one", n, err)
	}
	k.wantStatuses(t, map[string]string{a1.ID: signoff.ApprovalVoided}, c1.ID)

	// An owner revokes anyone's key; a key without approvals voids none
	// and appends no approvals.voided.
	fresh := k.approver(t, "op3", signoff.RoleOperator)
	if _, n, err := s.RevokeKey(ctx, k.owner, fresh.keyID); err != nil || n != 0 {
		t.Fatalf("owner revokes a key = %d, %v", n, err)
	}
	if len(k.voidedEvents(t)) != 2 {
		t.Fatal("revoking a key without approvals appended approvals.voided")
	}
	// The owner's list shows which keys are revoked.
	all, err := s.ListKeys(ctx, k.owner)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]bool{}
	for _, key := range all {
		states[key.ID] = key.RevokedAt != nil
	}
	if !states[op.keyID] || states[op2.keyID] || !states[fresh.keyID] {
		t.Fatalf("revoked state in ListKeys = %v", states)
	}
	k.verify(t)
}

// testActorDisable: an owner disables a person; their token and web
// session stop at once, their valid approvals are voided, and they
// approve nothing more. Enabling lets their tokens in again but brings
// back neither the approvals nor the session.
func testActorDisable(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	op2 := k.approver(t, "op2", signoff.RoleOperator)
	fixer := k.actor(t, "fix", signoff.RoleFixer)
	c := k.bug(t, "")
	a1 := k.record(t, k.sys, k.approval(c, op, digestHex("a"), time.Hour))
	a2 := k.record(t, op.actor, k.approval(c, op, digestHex("b"), time.Hour))
	kept := k.record(t, k.sys, k.approval(c, op2, digestHex("a"), time.Hour))
	_, opTok, err := s.CreateToken(ctx, k.owner, op.actor.ID, "laptop", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, fixerTok, err := s.CreateToken(ctx, k.owner, fixer.ID, "runner", nil)
	if err != nil {
		t.Fatal(err)
	}
	session, _, err := s.SignIn(ctx, opTok, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, foreignOwner, err := s.CreateWorkspace(ctx, "Globex", "gina")
	if err != nil {
		t.Fatal(err)
	}

	refusals := []struct {
		name  string
		by    signoff.Actor
		actor string
		code  string
	}{
		{"operator", op2.actor, op.actor.ID, signoff.EFORBIDDEN},
		{"viewer", k.actor(t, "vi", signoff.RoleViewer), op.actor.ID, signoff.EFORBIDDEN},
		{"agent", fixer, op.actor.ID, signoff.EFORBIDDEN},
		{"system", k.sys, op.actor.ID, signoff.EFORBIDDEN},
		{"another workspace's owner", foreignOwner, op.actor.ID, signoff.ENOTFOUND},
		{"unknown actor", k.owner, signoff.NewID(signoff.PrefixActor), signoff.ENOTFOUND},
		{"malformed id", k.owner, "act_../x", signoff.EINVALID},
		{"not disabled", k.owner, op.actor.ID, signoff.ECONFLICT}, // enabling
	}
	before := k.head(t)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			var err error
			if r.code == signoff.ECONFLICT {
				_, err = s.EnableActor(ctx, r.by, r.actor)
			} else {
				_, _, err = s.DisableActor(ctx, r.by, r.actor)
			}
			wantCode(t, err, r.code)
			if r.code != signoff.ECONFLICT {
				_, err = s.EnableActor(ctx, r.by, r.actor)
				wantCode(t, err, r.code)
			}
		})
	}
	k.unchanged(t, before, "refused disables")

	got, n, err := s.DisableActor(ctx, k.owner, op.actor.ID)
	if err != nil || n != 2 || got.DisabledAt == nil || !got.DisabledAt.Equal(k.clock.Now()) {
		t.Fatalf("DisableActor = %+v, %d, %v; want disabled now, 2 approvals voided", got, n, err)
	}
	// At once: the token, the web session and new sign-ins.
	_, err = s.Authenticate(ctx, opTok)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	_, err = s.WebSession(ctx, session)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	_, _, err = s.SignIn(ctx, opTok, time.Hour)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	_, _, err = s.CreateLoginLink(ctx, op.actor.ID, time.Minute)
	wantCode(t, err, signoff.EFORBIDDEN)
	if a, err := s.GetActor(ctx, k.ws.ID, op.actor.ID); err != nil || a.DisabledAt == nil {
		t.Fatalf("GetActor after disable = %+v, %v", a, err)
	}
	k.wantStatuses(t, map[string]string{a1.ID: signoff.ApprovalVoided, a2.ID: signoff.ApprovalVoided, kept.ID: signoff.ApprovalValid}, c.ID)
	_, err = s.RecordApproval(ctx, k.sys, k.approval(c, op, digestHex("c"), time.Hour))
	wantCode(t, err, signoff.EFORBIDDEN)
	_, _, err = s.DisableActor(ctx, k.owner, op.actor.ID)
	wantCode(t, err, signoff.ECONFLICT)

	dis := k.eventsOf(t, "actor.disabled")
	if len(dis) != 1 || dis[0].ActorID != k.owner.ID {
		t.Fatalf("actor.disabled events %+v", dis)
	}
	if p := payloadOf(t, dis[0]); p["actor_id"] != op.actor.ID || p["sessions_ended"] != 1.0 {
		t.Fatalf("actor.disabled payload %v", p)
	}
	p := k.voidedEvents(t)[c.ID]
	if ids := idsOf(p); p["reason"] != "approver disabled" || p["approver_id"] != op.actor.ID || len(ids) != 2 ||
		p["message"] != "approvals by op no longer count: they were disabled" {
		t.Fatalf("approvals.voided payload %v", p)
	}

	// Enabling: the token works again; the approvals stay void and the
	// old session stays ended.
	got, err = s.EnableActor(ctx, k.owner, op.actor.ID)
	if err != nil || got.DisabledAt != nil {
		t.Fatalf("EnableActor = %+v, %v", got, err)
	}
	if a, err := s.Authenticate(ctx, opTok); err != nil || a.ID != op.actor.ID {
		t.Fatalf("Authenticate after enable = %+v, %v", a, err)
	}
	_, err = s.WebSession(ctx, session)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	k.wantStatuses(t, map[string]string{a1.ID: signoff.ApprovalVoided, a2.ID: signoff.ApprovalVoided}, c.ID)
	if en := k.eventsOf(t, "actor.enabled"); len(en) != 1 || payloadOf(t, en[0])["actor_id"] != op.actor.ID {
		t.Fatalf("actor.enabled events %+v", en)
	}
	k.record(t, k.sys, k.approval(c, op, digestHex("d"), time.Hour)) // approves again, under the unrevoked key

	// An agent's token stops too; it has no approvals to void.
	if _, n, err := s.DisableActor(ctx, k.owner, fixer.ID); err != nil || n != 0 {
		t.Fatalf("disable agent = %d, %v", n, err)
	}
	_, err = s.Authenticate(ctx, fixerTok)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	k.verify(t)
}

// testActorDisableLastOwner: a workspace always keeps one enabled owner,
// whoever asks (the owner themselves or the CLI), and two owners disabling
// each other at once leave one of them.
func testActorDisableLastOwner(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	cli := signoff.CLIActor(k.ws.ID)
	before := k.head(t)
	_, _, err := s.DisableActor(ctx, k.owner, k.owner.ID)
	wantCode(t, err, signoff.ECONFLICT)
	_, _, err = s.DisableActor(ctx, cli, k.owner.ID)
	wantCode(t, err, signoff.ECONFLICT)
	k.unchanged(t, before, "refused lock-outs")

	second := k.actor(t, "olga", signoff.RoleOwner)
	if _, _, err := s.DisableActor(ctx, k.owner, k.owner.ID); err != nil {
		t.Fatalf("an owner with another owner beside them disables themselves: %v", err)
	}
	_, _, err = s.DisableActor(ctx, second, second.ID)
	wantCode(t, err, signoff.ECONFLICT)
	if _, err := s.EnableActor(ctx, second, k.owner.ID); err != nil {
		t.Fatal(err)
	}

	// Race: each owner disables the other. Exactly one wins.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, pair := range [][2]signoff.Actor{{k.owner, second}, {second, k.owner}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = s.DisableActor(ctx, pair[0], pair[1].ID)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Fatalf("racing disable: %v", err)
		}
	}
	actors, err := s.ListActors(ctx, k.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	enabled := 0
	for _, a := range actors {
		if a.Role == signoff.RoleOwner && a.DisabledAt == nil {
			enabled++
		}
	}
	if ok != 1 || enabled != 1 {
		t.Fatalf("racing disables: %d succeeded, %d enabled owners left; want 1 and 1", ok, enabled)
	}
	k.verify(t)
}

// testKeysPerWorkspace: a key id is unique within its workspace only.
// Another workspace registers the same public key, records approvals
// under it, and revokes it without touching the first one's; the conflict
// a workspace meets is about its own key alone.
func testKeysPerWorkspace(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.actor(t, "op", signoff.RoleOperator)
	priv, p := newPEM(t)
	mine, err := s.RegisterKey(ctx, op, p)
	if err != nil {
		t.Fatal(err)
	}
	otherWS, otherOwner, err := s.CreateWorkspace(ctx, "Globex", "gina")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.RegisterKey(ctx, otherOwner, p)
	if err != nil {
		t.Fatalf("another workspace registers the same public key: %v", err)
	}
	if theirs.ID != mine.ID || theirs.WorkspaceID != otherWS.ID || theirs.ActorID != otherOwner.ID {
		t.Fatalf("registered %+v", theirs)
	}
	for ws, holder := range map[string]string{k.ws.ID: op.ID, otherWS.ID: otherOwner.ID} {
		if got, err := s.GetKey(ctx, ws, mine.ID); err != nil || got.ActorID != holder || got.WorkspaceID != ws {
			t.Fatalf("GetKey(%s) = %+v, %v; want %s's", ws, got, err, holder)
		}
	}
	// A second registration in one workspace conflicts, and says nothing
	// of the other workspace's holder.
	_, err = s.RegisterKey(ctx, otherOwner, p)
	wantCode(t, err, signoff.ECONFLICT)
	if msg := signoff.ErrorMessage(err); strings.Contains(msg, op.ID) || strings.Contains(msg, k.ws.ID) {
		t.Fatalf("conflict message %q names the other workspace's key", msg)
	}

	// Each workspace's approvals reference its own row.
	otherProj, err := s.CreateProject(ctx, otherOwner, signoff.ProjectInput{Name: "globex"})
	if err != nil {
		t.Fatal(err)
	}
	oc, err := s.CreateCase(ctx, otherOwner, signoff.CaseInput{ProjectID: otherProj.ID, Kind: signoff.KindBug, Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	mineApp := k.record(t, k.sys, k.approval(k.bug(t, ""), approver{actor: op, key: priv, keyID: mine.ID}, digestHex("a"), time.Hour))
	theirApp := k.record(t, signoff.SystemActor(otherWS.ID), k.approval(oc, approver{actor: otherOwner, key: priv, keyID: mine.ID}, digestHex("a"), time.Hour))

	// Revoking in one workspace leaves the other's key and approvals be.
	if _, n, err := s.RevokeKey(ctx, otherOwner, mine.ID); err != nil || n != 1 {
		t.Fatalf("RevokeKey in the other workspace = %d, %v", n, err)
	}
	if got, _ := s.GetKey(ctx, k.ws.ID, mine.ID); got.RevokedAt != nil {
		t.Fatal("revoking in another workspace revoked this workspace's key")
	}
	if st := k.approvalStatuses(t, mineApp.CaseID)[mineApp.ID]; st != signoff.ApprovalValid {
		t.Fatalf("this workspace's approval is %q after the other revoked its key", st)
	}
	list, err := s.ListApprovals(ctx, otherOwner, oc.ID)
	if err != nil || len(list) != 1 || list[0].ID != theirApp.ID || list[0].Status != signoff.ApprovalVoided {
		t.Fatalf("the other workspace's approvals %+v, %v", list, err)
	}
	if evs := k.eventsOf(t, "approvals.voided"); len(evs) != 0 {
		t.Fatalf("this workspace's ledger has %d approvals.voided events", len(evs))
	}
	k.verify(t)
}
