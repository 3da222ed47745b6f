package serve

import "testing"

func TestPageOnDomains(t *testing.T) {
	domains := []string{"news.example", "blog.example"}
	for _, c := range []struct {
		origin, referer, url string
		host                 string
		on                   bool
	}{
		{"https://news.example", "", "", "news.example", true},
		{"https://M.News.Example.:8443", "", "", "m.news.example", true},
		{"", "https://user:pw@news.example/a", "", "news.example", true},
		{"", "https://evil.example/?u=https://news.example/", "", "evil.example", false},
		{"", "https://[::1]:8080/", "", "", false},
		{"", "https://www.blog.example/a?b=c", "", "www.blog.example", true},
		{"", "", "https://news.example/story", "news.example", true},
		{"https://evil.example", "https://news.example/", "https://news.example/", "evil.example", false}, // the browser's Origin wins
		{"null", "https://news.example/", "", "news.example", true},                                       // a sandboxed frame's Origin says nothing
		{"", "https://news.example.evil.example/", "", "news.example.evil.example", false},
		{"", "https://badnews.example/", "", "badnews.example", false},
		{"", "", "", "", false},
		{"", "", "not a url", "", false},
	} {
		host := pageHost(&Edge{PageOrigin: []byte(c.origin), Referer: []byte(c.referer)}, &Input{URL: []byte(c.url)})
		if !asciiEqualFold(host, c.host) || onDomains(host, domains) != c.on {
			t.Errorf("page of Origin %q, Referer %q, url %q = %q, on the domains %v; want %q, %v", c.origin, c.referer, c.url, host, onDomains(host, domains), c.host, c.on)
		}
	}
}

func TestPageHostAllocatesNothing(t *testing.T) {
	e, in := &Edge{PageOrigin: []byte("https://M.News.Example:8443")}, &Input{}
	domains := []string{"blog.example", "news.example"}
	if n := testing.AllocsPerRun(100, func() { onDomains(pageHost(e, in), domains) }); n != 0 {
		t.Errorf("pageHost and onDomains allocate %v times; want 0", n)
	}
}
