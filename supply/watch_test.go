package supply_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee"
	"marquee/store/sqlite"
	"marquee/supply"
)

// TestWatchers: two instances' watchers on one store check each site
// once (the store's claim), store what they found, and a check asked for
// within a minute of the last is refused with when to ask again.
func TestWatchers(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var fetches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if !strings.HasPrefix(r.URL.Path, "/news.example/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ads.example.net, 1, DIRECT\n")
	}))
	defer srv.Close()
	for _, s := range []marquee.Site{{Name: "news", Domains: []string{"news.example"}}, {Name: "blog", Domains: []string{"blog.example"}}} {
		s.SellerType = marquee.SellerPublisher
		if _, err := st.CreateSite(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	net := supply.Network{Domain: "ads.example.net"}
	watcher := func() *supply.Watcher {
		return &supply.Watcher{Store: st, Now: time.Now, Log: slog.New(slog.DiscardHandler),
			Checker: supply.NewChecker(supply.CheckerConfig{Network: net, URL: srv.URL + "/{domain}/ads.txt"})}
	}
	w1, w2 := watcher(), watcher()
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w1.Run(runCtx) })
	wg.Go(func() { w2.Run(runCtx) })
	deadline := time.Now().Add(10 * time.Second)
	for {
		news, _ := st.Site(ctx, "news")
		blog, _ := st.Site(ctx, "blog")
		if news.AdsTxt != nil && blog.AdsTxt != nil {
			if news.AdsTxt.Status != marquee.AdsTxtAuthorized || blog.AdsTxt.Status != marquee.AdsTxtMissing {
				t.Errorf("checks = %+v, %+v; want authorized, missing", news.AdsTxt, blog.AdsTxt)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sites were not checked within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if n := fetches.Load(); n != 2 {
		t.Errorf("%d fetches by two watchers of two sites; want 2 (one instance a site)", n)
	}
	if _, err := w1.CheckNow(ctx, "news"); marquee.KindOf(err) != marquee.KindTooManyRequests {
		t.Errorf("a check asked for at once after the last = %v; want too many requests", err)
	}
	if _, err := w1.CheckNow(ctx, "nosuch"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("a check of no site = %v; want not found", err)
	}
}
