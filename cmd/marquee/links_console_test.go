//go:build !noconsole

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The link editor in a browser: title, tags, the UTM builder, a rule and
// an A/B split; the link's page with its referrers and destinations, and
// promoting the winner; the list by tag; a link on a domain; an import
// checked, then made.
func TestLinksInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-link-domains", "go.brand.example", "-reports-flush", "100ms", "-events-flush", "20ms")
	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")

	b.open("#/links/new", "#link-form")
	b.do("fill a link with a rule and a split",
		chromedp.SendKeys(chromedp.CSS(`[data-field="code"] input`), "ab"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="url"] input`), "https://example.com/landing?x=1"),
		click(`#utm summary`),
		chromedp.SendKeys(chromedp.CSS(`#utm-source`), "newsletter"),
		chromedp.SendKeys(chromedp.CSS(`#utm-medium`), "email"),
		click(`#utm-apply`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="title"] input`), "Spring sale"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="tags"] input`), "Spring, promo"),
		click(`[data-field="rules"] button.add`),
		click(`[data-field="rules[0]"] input[value=ios]`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="rules[0]"] input[type=url]`), "https://apps.example/ios"),
		click(`[data-field="destinations"] button.add`),
		click(`[data-field="destinations"] button.add`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="destinations[0]"] input[type=url]`), "https://a.example/"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="destinations[1]"] input[type=url]`), "https://b.example/"))
	b.labelled("link editor with a rule and a split")
	b.do("save it", click(`#link-form button[type=submit]`))
	b.waitHash(`^#/links/ab$`)
	var l struct {
		URL, Title   string
		Tags         []string
		Rules        []struct{ When struct{ Platform []string } }
		Destinations []struct{ Weight int }
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/links/ab", "").body), &l)
	if l.URL != "https://example.com/landing?x=1&utm_source=newsletter&utm_medium=email" || l.Title != "Spring sale" || strings.Join(l.Tags, ",") != "spring,promo" ||
		len(l.Rules) != 1 || strings.Join(l.Rules[0].When.Platform, ",") != "ios" || len(l.Destinations) != 2 || l.Destinations[0].Weight != 50 {
		t.Fatalf("the link the editor made: %+v", l)
	}

	// Visitors from a newsletter, split; the page shows where they came
	// from and where they went.
	for i := range 12 {
		req, _ := http.NewRequest("GET", in.url+"/r/ab", nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128."+string(rune('0'+i%10))+string(rune('a'+i)))
		req.Header.Set("Referer", "https://www.news.example/today")
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/links/ab/stats?by=referrer", ""); !strings.Contains(r.body, `"referrer":"news.example"`) {
			return "no referrer counted yet: " + r.body
		}
		return ""
	})
	b.open("#/links/ab", "#top-referrers table")
	if got := b.text("#top-referrers"); !strings.Contains(got, "news.example") {
		t.Errorf("top referrers = %q; want news.example", got)
	}
	if got := b.text("#destinations"); !strings.Contains(got, "https://a.example/") || !strings.Contains(got, "50.00%") {
		t.Errorf("destinations card = %q; want both, 50%% each", got)
	}
	clicks := eval[int](b, `[...document.querySelectorAll('#destinations tbody tr')].reduce((n, tr) => n + +tr.cells[2].textContent.replace(/,/g, ''), 0)`)
	if clicks != 12 {
		t.Errorf("clicks by destination on the page sum to %d; want 12", clicks)
	}
	b.do("promote b", click(`#destinations tbody tr:nth-child(2) button.danger`), click(`#destinations tbody tr:nth-child(2) span[role=alert] + button.danger`))
	eventually(t, 5*time.Second, func() string {
		r := in.admin("GET", "/api/v1/links/ab", "")
		if !strings.Contains(r.body, `"destinations":[{"url":"https://a.example/","weight":0},{"url":"https://b.example/","weight":100}]`) ||
			!strings.Contains(r.body, `"title":"Spring sale"`) || !strings.Contains(r.body, `"platform":["ios"]`) {
			return "after promote: " + r.body
		}
		return ""
	})

	// The list by tag, and a link on a domain with its own short URL.
	in.expect(in.admin("POST", "/api/v1/links", `{"code":"sale","domain":"go.brand.example","url":"https://brand.example/","tags":["promo"]}`), 201, "")
	b.open("#/links?tag=promo", "table")
	if got := b.text("main table"); !strings.Contains(got, "go.brand.example/sale") || !strings.Contains(got, "ab") {
		t.Errorf("links tagged promo = %q; want ab and go.brand.example/sale", got)
	}
	b.open("#/links/sale?domain=go.brand.example", "#qr svg")
	if v := eval[string](b, `document.getElementById('short-url').value`); v != "https://go.brand.example/r/sale" {
		t.Errorf("short URL of a domain link = %q", v)
	}

	// An import: checked (a bad row named), then a good file imported.
	files := t.TempDir()
	bad, good := filepath.Join(files, "bad.csv"), filepath.Join(files, "good.csv")
	os.WriteFile(bad, []byte("shortCode,longUrl,title,tags\nimp1,https://example.com/1,One,a|b\nimp2,ftp://example.com/2,,\n"), 0o600)
	os.WriteFile(good, []byte("shortCode,longUrl,title,tags\nimp1,https://example.com/1,One,a|b\nimp3,https://example.com/3,,\n"), 0o600)
	b.open("#/links/import", "#import-file")
	b.labelled("import")
	b.do("check a file with a bad row", chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{bad}),
		click(`#import-check`), chromedp.WaitVisible(chromedp.CSS(`#import-problems`)))
	if got := b.text("#import-result"); !strings.Contains(got, "shlink format, 2 rows, 1 good") || !strings.Contains(got, "row 3: url") {
		t.Errorf("the check = %q; want 2 rows, 1 good, row 3 named", got)
	}
	b.do("import a good file", chromedp.SetUploadFiles(chromedp.CSS(`#import-file`), []string{good}), click(`#import-run`))
	eventually(t, 10*time.Second, func() string {
		if got := b.text("#import-status"); !strings.HasPrefix(got, "Import done") {
			return "import status: " + got
		}
		return ""
	})
	if r := in.admin("GET", "/api/v1/links/imp3", ""); r.status != 200 {
		t.Errorf("GET imp3 after the console's import = %d", r.status)
	}
	if errs, _ := b.logged(); len(errs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(errs, "\n"))
	}
}
