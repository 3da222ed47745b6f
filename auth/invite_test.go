package auth_test

import (
	"context"
	"testing"
	"time"

	"marquee"
	"marquee/auth"
)

// TestInvitationExpiry: an invitation's link sets a password until
// InvitationTTL after it was made, then answers gone (410); its mark is
// never a password; a link of another user's id is no invitation.
func TestInvitationExpiry(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	a := auth.New(st, "", nil)
	t0 := time.Now()
	secret, mark, expires := auth.NewInvitation(t0)
	if !expires.Equal(t0.Add(auth.InvitationTTL).UTC()) || !auth.Invited(mark) || auth.CheckPassword(mark, mark) || auth.CheckPassword(mark, secret) {
		t.Fatalf("invitation %q, %v: want a mark no password matches, expiring in a week", mark, expires)
	}
	u, err := st.CreateUser(ctx, marquee.User{Email: "b@example.com", Role: marquee.RoleViewer}, mark)
	if err != nil {
		t.Fatal(err)
	}
	token := auth.InvitationToken(u.ID, secret)
	if _, err := a.AcceptInvitation(ctx, st, token, "a long enough password", "192.0.2.9", t0.Add(auth.InvitationTTL)); marquee.KindOf(err) != marquee.KindGone {
		t.Errorf("accepted at its expiry: %v; want gone", err)
	}
	if _, err := a.AcceptInvitation(ctx, st, auth.InvitationToken(u.ID+1, secret), "a long enough password", "192.0.2.9", t0); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("another id's link: %v; want not found", err)
	}
	if got, err := a.AcceptInvitation(ctx, st, token, "a long enough password", "192.0.2.9", t0.Add(auth.InvitationTTL-time.Minute)); err != nil || got.Principal.UserID != u.ID || got.Cookie == "" {
		t.Errorf("accepted a minute before its expiry: %+v, %v; want the user signed in", got, err)
	}
}
