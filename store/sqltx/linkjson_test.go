package sqltx

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"marquee"
	"marquee/fixture"
)

// What marquee.LinkRule's MarshalJSON writes (how the store keeps rules),
// decodeRules reads back as it was, hostile text included; and the same
// for destinations.
func TestRulesRoundTrip(t *testing.T) {
	rules := append(fixture.RuledLink(3).Rules, marquee.LinkRule{URL: "https://x.test/\u2028\"q\"\\", When: marquee.RuleWhen{
		Countries: []string{"DE"}, Query: []marquee.QueryMatch{{Name: "a\"b", Value: "é🎉\\n"}, {Name: "z", Value: ""}},
		From: time.Date(2030, 1, 2, 3, 4, 5, 6e6, time.UTC)}})
	dests := []marquee.Destination{{URL: "https://a.test/?q=\"1\"", Weight: 0}, {URL: "https://b.test/", Weight: 1000}}
	text, _ := json.Marshal(rules)
	got, err := decodeRules(string(text))
	if err != nil || !reflect.DeepEqual(got, rules) {
		t.Fatalf("decodeRules(%s) =\n%+v, %v; want\n%+v", text, got, err, rules)
	}
	text, _ = json.Marshal(dests)
	if got, err := decodeDestinations(string(text)); err != nil || !reflect.DeepEqual(got, dests) {
		t.Fatalf("decodeDestinations(%s) = %+v, %v; want %+v", text, got, err, dests)
	}
	for _, bad := range []string{`{`, `{}`, `[{"url":"x"}]`, `[{"when":{"from":"yesterday"}}]`} {
		if _, err := decodeRules(bad); err == nil {
			t.Errorf("decodeRules(%s): want an error", bad)
		}
	}
}

func BenchmarkDecodeRules(b *testing.B) {
	text, _ := json.Marshal(fixture.RuledLink(5).Rules)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRules(string(text)); err != nil {
			b.Fatal(err)
		}
	}
}
