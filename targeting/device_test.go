package targeting_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"marquee/targeting"
)

// TestDeviceOfRealUserAgents reads testdata/useragents.txt: real
// User-Agents of phones, tablets, TVs, desktop browsers and crawlers,
// each with the device, browser and OS $device, $browser and $os see.
// A crawler's browser and OS are not checked (what a bot claims).
func TestDeviceOfRealUserAgents(t *testing.T) {
	f, err := os.Open("testdata/useragents.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc, n := bufio.NewScanner(f), 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 4 && !(len(parts) == 3 && parts[0] == "bot") {
			t.Fatalf("bad fixture line %q", line)
		}
		ua := parts[len(parts)-1]
		device, browser, os := targeting.Device(ua)
		if device != parts[0] || parts[0] != "bot" && (browser != parts[1] && parts[1] != "-" || os != parts[2] && parts[2] != "-") {
			t.Errorf("Device(%q) = %q, %q, %q; want %q", ua, device, browser, os, parts[:len(parts)-1])
		}
		n++
	}
	if n < 12 {
		t.Fatalf("read %d User-Agents", n)
	}
	if d, b, o := targeting.Device(""); d != "" || b != "" || o != "" {
		t.Errorf(`Device("") = %q, %q, %q; want nothing known`, d, b, o)
	}
}

func TestPrimaryLanguage(t *testing.T) {
	for in, want := range map[string]string{"de-DE,de;q=0.9,en;q=0.5": "de", "EN": "en", "zh-Hant-TW": "zh", "*": "", "": "", "english": "", "fil": "fil"} {
		if got := targeting.PrimaryLanguage(in); got != want {
			t.Errorf("PrimaryLanguage(%q) = %q; want %q", in, got, want)
		}
	}
}

// BenchmarkDevice: a User-Agent seen before (kept), and one never seen
// (parsed, then kept).
func BenchmarkDevice(b *testing.B) {
	ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	b.Run("seen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			targeting.Device(ua)
		}
	})
	b.Run("new", func(b *testing.B) {
		uas := make([]string, 1<<16)
		for i := range uas {
			uas[i] = ua + " build/" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			targeting.Device(uas[i%len(uas)])
			i++
		}
	})
}
