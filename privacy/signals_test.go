package privacy_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"marquee/privacy"
)

// vector is a request's signals, with what docs/privacy.md's table says
// it may do (testdata/vectors.json: the strings made by the IAB's own
// encoders, @iabgpp/cmpapi and @iabtcf/core — testdata/vectors/make.mjs).
type vector struct {
	Name                  string
	GDPR                  *int
	TCF, GPP, GPPSID, USP string
	GPC, Child            bool
	Want                  struct {
		Limit  string
		Denied []string
	}
}

func (v vector) signal() privacy.Signal {
	s := privacy.Signal{GDPR: -1, TCF: []byte(v.TCF), GPP: []byte(v.GPP), GPPSID: []byte(v.GPPSID), USP: []byte(v.USP), GPC: v.GPC, Child: v.Child}
	if v.GDPR != nil {
		s.GDPR = int8(*v.GDPR)
	}
	return s
}

func denied(v privacy.Verdict) []string {
	var out []string
	for a := range privacy.NumActivities {
		if !v.Allows(a) {
			out = append(out, a.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestDecideVectors: every vector — TCF strings with purpose 1 only, 1
// and 2, 1 to 4, 7 by legitimate interest, precise geolocation; each US
// section of GPP with its opt-outs set and not; a section that does not
// apply; GPP and TCF on one request; US Privacy strings; GPC; COPPA; a
// malformed string of each kind — decides the user key (Limit) and the
// activities as the table says, in balanced and off modes alike (strict
// asks more of a user key: TestLimit).
func TestDecideVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 40 {
		t.Fatalf("%d vectors; want the whole table's", len(vs))
	}
	for _, mode := range []privacy.Mode{privacy.Balanced, privacy.Off} {
		p, err := privacy.NewPolicy(mode, []byte("0123456789abcdef"), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			got := p.Decide(v.signal())
			want := v.Want.Denied
			if want == nil {
				want = []string{}
			}
			limit := v.Want.Limit
			if d := denied(got); got.Limit.String() != limit || !slices.Equal(append([]string{}, d...), want) {
				t.Errorf("%s, %s: limit %q, denied %v; want %q, %v", mode, v.Name, got.Limit, d, limit, want)
			}
			if p.Limit(v.signal()) != got.Limit {
				t.Errorf("%s, %s: Limit disagrees with Decide", mode, v.Name)
			}
		}
	}
}

// FuzzDecide: whatever a request sends as its strings, Decide answers —
// never a panic — and an answer that uses a user key denies nothing a
// user key is needed for only when it allows the key.
func FuzzDecide(f *testing.F) {
	f.Add("DBABLA~BEAQAAAAAQA.QA", "7", "CQtAQoAQtAQoAAHABAENCWEgAIAAAAAAAAqIAAAAAAAA.YAAAAAAAAAAA", "1YYN", int8(1))
	f.Add("DBACNY~CQtAQoAQtAQoAAHABAENCWEoAPAAAAIAAAqIAVAAAAAAAQAAAAAA~BAAAAAAAAQA.QA", "2,7", "", "", int8(-1))
	f.Add("", "", "", "", int8(0))
	p, err := privacy.NewPolicy(privacy.Balanced, []byte("0123456789abcdef"), 42)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, gppString, sid, tcf, usp string, gdpr int8) {
		v := p.Decide(privacy.Signal{GDPR: gdpr % 2, GPP: []byte(gppString), GPPSID: []byte(sid), TCF: []byte(tcf), USP: []byte(usp)})
		if v.Limit != privacy.None && v.Allows(privacy.UserKey) {
			t.Fatalf("limit %s but a user key allowed", v.Limit)
		}
	})
}

// BenchmarkDecide: what a decision's signals cost to judge — none (the
// common case), a TC string, a GPP string with a US section.
func BenchmarkDecide(b *testing.B) {
	p, _ := privacy.NewPolicy(privacy.Balanced, []byte("0123456789abcdef"), 0)
	for _, c := range []struct {
		name string
		s    privacy.Signal
	}{
		{"none", privacy.Signal{GDPR: -1}},
		{"tcf", privacy.Signal{GDPR: 1, TCF: []byte("CQtAQoAQtAQoAAHABAENCWEoAPAAAAIAAAqIAVAAAAAAAQAAAAAA.YAAAAAAAAAAA")}},
		{"gpp-usnat", privacy.Signal{GDPR: -1, GPP: []byte("DBABLA~BEAQAAAAAQA.QA"), GPPSID: []byte("7")}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Decide(c.s)
			}
		})
	}
}
