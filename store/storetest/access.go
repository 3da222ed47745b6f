package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"marquee"
)

// testAccess: users (the first one only once, a taken email, the last owner), keys (revocation
// ends the key's sessions), sessions, failed logins, and the audit log
// written with each change — and not when the change fails.
func testAccess(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	audit := func(action string) context.Context {
		return marquee.WithAudit(ctx, marquee.Audit{Actor: "test", IP: "192.0.2.1", Action: action, Fields: []string{"email"}})
	}
	if has, err := st.HasUsers(ctx); err != nil || has {
		t.Fatalf("HasUsers of a new store = %v, %v; want false", has, err)
	}
	owner, err := st.CreateFirstUser(audit("create"), "o@example.com", marquee.RoleOwner, "hash-o")
	if err != nil {
		t.Fatal(err)
	}
	if has, err := st.HasUsers(ctx); err != nil || !has {
		t.Fatalf("HasUsers after the first user = %v, %v; want true", has, err)
	}
	if _, err := st.CreateFirstUser(audit("create"), "second@example.com", marquee.RoleOwner, "hash-2"); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("CreateFirstUser with a user present = %v; want a conflict", err)
	}
	if _, err := st.CreateUser(audit("create"), marquee.User{Email: "o@example.com", Role: marquee.RoleViewer}, "hash-x"); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("CreateUser(taken email) = %v; want a conflict", err)
	}
	viewer, err := st.CreateUser(ctx, marquee.User{Email: "v@example.com", Role: marquee.RolePublisher, Bounds: marquee.Bounds{Sites: []string{"news"}}}, "hash-v")
	if err != nil {
		t.Fatal(err)
	}
	if u, hash, err := st.UserLogin(ctx, "v@example.com"); err != nil || u.ID != viewer.ID || hash != "hash-v" || !slices.Equal(u.Sites, []string{"news"}) {
		t.Fatalf("UserLogin = %+v, %q, %v; want the publisher of news", u, hash, err)
	}
	rebound := marquee.Bounds{Advertisers: marquee.IDs{3, 4}}
	advertiser := marquee.RoleAdvertiser
	if u, err := st.UpdateUser(ctx, viewer.ID, marquee.UserChange{Role: &advertiser, Bounds: &rebound}); err != nil || u.Sites != nil || !slices.Equal(u.Advertisers, rebound.Advertisers) {
		t.Fatalf("UpdateUser(bounds) = %+v, %v", u, err)
	}
	if u, err := st.User(ctx, viewer.ID); err != nil || u.Role != advertiser || !slices.Equal(u.Advertisers, rebound.Advertisers) {
		t.Fatalf("User after the bounds changed = %+v, %v; want the advertiser user of 3 and 4", u, err)
	}
	demote := marquee.RoleViewer
	if _, err := st.UpdateUser(audit("update"), owner.ID, marquee.UserChange{Role: &demote}); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("demoting the last owner = %v; want a conflict", err)
	}
	if err := st.DeleteUser(audit("delete"), owner.ID, nil); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("deleting the last owner = %v; want a conflict", err)
	}
	taken := "o@example.com"
	if _, err := st.UpdateUser(ctx, viewer.ID, marquee.UserChange{Email: &taken}); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("UpdateUser(taken email) = %v; want a conflict", err)
	}
	refused := marquee.Errorf(marquee.KindForbidden, "no")
	if err := st.DeleteUser(ctx, viewer.ID, func(marquee.User) error { return refused }); err != refused && marquee.KindOf(err) != marquee.KindForbidden {
		t.Fatalf("DeleteUser refused by allow = %v", err)
	}

	// A session of the viewer ends with a new password.
	se := marquee.Session{Hash: "s1", UserID: viewer.ID, CreatedAt: now, SeenAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.CreateSession(ctx, se); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Session(ctx, "s1"); err != nil || got.UserID != viewer.ID || !got.ExpiresAt.Equal(se.ExpiresAt) {
		t.Fatalf("Session = %+v, %v", got, err)
	}
	if err := st.TouchSessions(ctx, map[string]time.Time{"s1": now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Session(ctx, "s1"); !got.SeenAt.Equal(now.Add(time.Minute)) {
		t.Errorf("TouchSessions: seen %v; want %v", got.SeenAt, now.Add(time.Minute))
	}
	pw := "hash-v2"
	if _, err := st.UpdateUser(audit("update"), viewer.ID, marquee.UserChange{PasswordHash: &pw}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, "s1"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("session after a new password = %v; want it gone", err)
	}

	// Keys: revocation is kept, and ends the key's sessions.
	scopes, _, _ := marquee.ParseScopes([]string{"ads:read", "links:write"})
	k, err := st.CreateKey(audit("create"), marquee.APIKey{Name: "ci", Prefix: "mq_abcdefg", Scopes: scopes, CreatedBy: "test"}, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.KeyByHash(ctx, "h1"); err != nil || got.ID != k.ID || got.Scopes != scopes || got.RevokedAt != nil || got.Bound() {
		t.Fatalf("KeyByHash = %+v, %v", got, err)
	}
	bk, err := st.CreateKey(ctx, marquee.APIKey{Name: "acme", Prefix: "mq_bound01", Scopes: marquee.BoundScopes, Bounds: marquee.Bounds{Advertisers: marquee.IDs{7}}, CreatedBy: "test"}, "h-bound")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.KeyByHash(ctx, "h-bound"); err != nil || got.ID != bk.ID || !slices.Equal(got.Advertisers, []int64{7}) {
		t.Fatalf("KeyByHash(a key bound to advertiser 7) = %+v, %v", got, err)
	}
	if err := st.TouchKeys(ctx, map[int64]time.Time{k.ID: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, marquee.Session{Hash: "s2", KeyID: k.ID, CreatedAt: now, SeenAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeKey(audit("revoke"), k.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Key(ctx, k.ID); got.RevokedAt == nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(now) {
		t.Errorf("revoked key = %+v; want revokedAt and lastUsedAt set", got)
	}
	if _, err := st.Session(ctx, "s2"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("key's session after revocation = %v; want it gone", err)
	}
	if err := st.RevokeKey(ctx, 999); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("RevokeKey(unknown) = %v; want not found", err)
	}

	// Failed logins.
	subjects := []string{"ip:192.0.2.1", "email:x@example.com"}
	for i := range 3 {
		if err := st.AddLoginFailure(ctx, subjects, now.Add(time.Duration(i)*time.Second), now.Add(-15*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	counts, last, err := st.LoginFailures(ctx, subjects, now.Add(-15*time.Minute))
	if err != nil || !slices.Equal(counts, []int{3, 3}) || !last.Equal(now.Add(2*time.Second)) {
		t.Fatalf("LoginFailures = %v, %v, %v; want [3 3] at %v", counts, last, err, now.Add(2*time.Second))
	}
	if err := st.ClearLoginFailures(ctx, "email:x@example.com"); err != nil {
		t.Fatal(err)
	}
	if counts, _, _ := st.LoginFailures(ctx, subjects, now.Add(-15*time.Minute)); !slices.Equal(counts, []int{3, 0}) {
		t.Fatalf("after ClearLoginFailures(email) = %v; want [3 0]", counts)
	}
	if _, err := st.TrimSessions(ctx, now, now.Add(-12*time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if counts, _, _ := st.LoginFailures(ctx, subjects, now.Add(-15*time.Minute)); !slices.Equal(counts, []int{0, 0}) {
		t.Fatalf("after TrimSessions past them, failures = %v; want none", counts)
	}

	// The audit log: one entry a successful audited change, none for the
	// refused ones (their transactions rolled back).
	entries, total, err := st.AuditLog(ctx, marquee.AuditFilter{Actor: "test", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Entity+" "+e.Action+" "+e.EntityID)
		if e.IP != "192.0.2.1" || !slices.Equal(e.Fields, []string{"email"}) {
			t.Errorf("audit entry %+v: want the request's ip and fields", e)
		}
	}
	want := []string{"key revoke " + fmt.Sprint(k.ID), "key create " + fmt.Sprint(k.ID), "user update " + fmt.Sprint(viewer.ID), "user create " + fmt.Sprint(owner.ID)}
	if !slices.Equal(got, want) || total != len(want) {
		t.Errorf("audit log = %v (total %d); want %v", got, total, want)
	}
	if n, err := st.TrimAudit(ctx, time.Now().Add(time.Hour)); err != nil || n != int64(len(want)) {
		t.Errorf("TrimAudit = %d, %v; want %d", n, err, len(want))
	}
}
