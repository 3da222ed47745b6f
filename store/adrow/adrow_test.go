package adrow_test

import (
	"reflect"
	"testing"
	"time"

	"marquee"
	"marquee/store/adrow"
)

// richAd is an ad with every column adrow decodes set, hostile values
// included.
func richAd() marquee.AdInput {
	return marquee.AdInput{Title: "t", StartAt: time.UnixMilli(1_700_000_000_000).UTC(), EndAt: time.UnixMilli(1_800_000_000_000).UTC(),
		Conditions: []marquee.Condition{{Country: []string{"JP", "GB"}, Platform: []string{"ios"}}, {AgeStart: 24, AgeEnd: 31, Gender: []string{"F"}}},
		CampaignID: 7,
		Creative: &marquee.Creative{Type: marquee.CreativeVideo, Width: 1280, Height: 720, MediaURL: "https://cdn.example/v.mp4?a=1&b=\"<>\u2028",
			MimeType: "video/mp4", DurationMs: 15000, ClickURL: "https://a.example/?u={placement}&c={campaign}",
			ImpressionTrackers: []string{"https://t.example/i?x=1"}},
		Placements: []string{"video-preroll", "side"},
		Targeting:  &marquee.Targeting{All: []marquee.Targeting{{Key: "section", In: []string{"news", "ünï"}}, {Key: "pos", NotIn: []string{"btf"}}}},
	}
}

// rowOf is in's row as a store writes it (Conditions, ExtrasOf).
func rowOf(t testing.TB, in marquee.AdInput) adrow.Row {
	conds, err := adrow.Conditions(in)
	if err != nil {
		t.Fatal(err)
	}
	x, err := adrow.ExtrasOf(in)
	if err != nil {
		t.Fatal(err)
	}
	r := adrow.Row{ID: 1, Title: in.Title, Conditions: conds, Start: in.StartAt.UnixMilli(), End: in.EndAt.UnixMilli(),
		Campaign: in.CampaignID, Placements: x.Placements, State: marquee.StateActive}
	r.Creative, _ = x.Creative.(string)
	r.Targeting, _ = x.Targeting.(string)
	return r
}

// TestRowRoundTrip: what a store writes of an ad, Row.Ad reads back.
func TestRowRoundTrip(t *testing.T) {
	in := richAd()
	r := rowOf(t, in)
	a, err := r.Ad()
	if err != nil {
		t.Fatal(err)
	}
	got := marquee.AdInput{Title: a.Title, StartAt: a.StartAt, EndAt: a.EndAt, Conditions: a.Conditions, CampaignID: a.CampaignID,
		Creative: a.Creative, Placements: a.Placements, Targeting: a.Targeting}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("Row.Ad of the row of\n%+v\n= %+v", in, got)
	}
	r.Conditions = "[{\"country\":"
	if _, err := r.Ad(); err == nil {
		t.Fatal("Row.Ad of broken conditions: no error")
	}
}

// BenchmarkRowAd decodes one campaign ad's row as marquee seed writes it
// (a start at 1,000,000 ads decodes a million of them).
func BenchmarkRowAd(b *testing.B) {
	r := rowOf(b, richAd())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Ad(); err != nil {
			b.Fatal(err)
		}
	}
}
