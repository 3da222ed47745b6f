package auth_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"marquee"
	"marquee/auth"
	"marquee/store/sqlite"
)

func init() { auth.PasswordCost = 4 }

func newStore(tb testing.TB) *sqlite.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "m.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// TestSessionExpiry: a session ends after SessionIdle without use, and
// SessionMax after sign-in however often it is used.
func TestSessionExpiry(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	hash, _ := auth.HashPassword("correct horse battery")
	if _, err := st.CreateUser(ctx, marquee.User{Email: "a@example.com", Role: marquee.RoleViewer}, hash); err != nil {
		t.Fatal(err)
	}
	a := auth.New(st, "", nil)
	t0 := time.Now()
	login := auth.Login{Email: "a@example.com", Password: "correct horse battery", IP: "192.0.2.1"}
	idle, err := a.SignIn(ctx, st, login, t0)
	if err != nil {
		t.Fatal(err)
	}
	cookie := []byte(idle.Cookie)
	if p, err := a.Cookie(ctx, cookie, t0.Add(11*time.Hour)); err != nil || p.Role != marquee.RoleViewer {
		t.Fatalf("Cookie 11 h after sign-in = %+v, %v; want the viewer", p, err)
	}
	if _, err := a.Cookie(ctx, cookie, t0.Add(11*time.Hour+auth.SessionIdle)); marquee.KindOf(err) != marquee.KindUnauthorized {
		t.Fatalf("Cookie %v after its last use = %v; want it ended", auth.SessionIdle, err)
	}

	busy, err := a.SignIn(ctx, st, login, t0)
	if err != nil {
		t.Fatal(err)
	}
	at := t0
	for ; at.Before(t0.Add(auth.SessionMax)); at = at.Add(11 * time.Hour) {
		if _, err := a.Cookie(ctx, []byte(busy.Cookie), at); err != nil {
			t.Fatalf("Cookie %v after sign-in, used every 11 h = %v", at.Sub(t0), err)
		}
	}
	if _, err := a.Cookie(ctx, []byte(busy.Cookie), t0.Add(auth.SessionMax)); marquee.KindOf(err) != marquee.KindUnauthorized {
		t.Fatalf("Cookie %v after sign-in = %v; want it ended", auth.SessionMax, err)
	}
	// Sign-ins by the same user are independent sessions.
	if idle.Cookie == busy.Cookie {
		t.Fatal("two sign-ins got one session id")
	}
}

// BenchmarkBearer authenticates an API key on an admin route: its hash,
// a cache hit, the checks. The goal is ≤ 1 µs.
//
//	go test ./auth -run XXX -bench Bearer
func BenchmarkBearer(b *testing.B) {
	ctx := context.Background()
	st := newStore(b)
	secret, hash := auth.NewSecret(auth.KeyPrefix)
	scopes, _, _ := marquee.ParseScopes([]string{"ads:read"})
	if _, err := st.CreateKey(ctx, marquee.APIKey{Name: "bench", Prefix: secret[:auth.PrefixLen], Scopes: scopes, CreatedBy: "bench"}, hash); err != nil {
		b.Fatal(err)
	}
	a := auth.New(st, "bootstrap-token-of-32-characters", nil)
	token, now := []byte(secret), time.Now()
	if _, err := a.Bearer(ctx, token, now); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Bearer(ctx, token, now); err != nil {
			b.Fatal(err)
		}
	}
}
