package marquee_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"marquee"
)

const window = `"startAt":"2023-12-10T03:00:00.000Z","endAt":"2023-12-31T16:00:00.000Z"`

func TestParseAdInputProblems(t *testing.T) {
	long := strings.Repeat("é", marquee.MaxTitleLen+1)
	for _, c := range []struct {
		name, body string
		want       marquee.Problems
	}{
		{"empty body", ``, marquee.Problems{"body": "is empty; want a JSON object"}},
		{"malformed", `{"title":`, marquee.Problems{"body": "malformed JSON: unexpected end of JSON input"}},
		{"trailing garbage", `{"title":"a"}x`, marquee.Problems{"body": "malformed JSON: invalid character 'x' after top-level value"}},
		{"array body", `[]`, marquee.Problems{"body": "must be a JSON object"}},
		{"null body", `null`, marquee.Problems{"body": "must be a JSON object"}},
		{"missing everything", `{}`, marquee.Problems{"title": "is required", "startAt": "is required", "endAt": "is required"}},
		{"unknown field", `{"title":"a",` + window + `,"foo":1}`, marquee.Problems{"foo": "unknown field"}},
		{"title wrong type", `{"title":5,` + window + `}`, marquee.Problems{"title": "must be a string"}},
		{"title blank", `{"title":"  \t",` + window + `}`, marquee.Problems{"title": "must not be empty"}},
		{"title too long", `{"title":"` + long + `",` + window + `}`, marquee.Problems{"title": "must be at most 256 characters (got 257)"}},
		{"title with NUL", `{"title":"a\u0000b",` + window + `}`, marquee.Problems{"title": "must not contain U+0000 (NUL)"}},
		{"startAt not string", `{"title":"a","startAt":1,"endAt":"2023-12-31T16:00:00Z"}`, marquee.Problems{"startAt": "must be an RFC 3339 timestamp string"}},
		{"startAt not RFC 3339", `{"title":"a","startAt":"2023-12-10","endAt":"2023-12-31T16:00:00Z"}`, marquee.Problems{"startAt": `must be an RFC 3339 timestamp, got "2023-12-10"`}},
		{"endAt null", `{"title":"a","startAt":"2023-12-10T03:00:00Z","endAt":null}`, marquee.Problems{"endAt": "is required"}},
		{"end before start", `{"title":"a","startAt":"2023-12-10T03:00:00Z","endAt":"2023-12-10T02:00:00Z"}`, marquee.Problems{"endAt": "must be after startAt"}},
		{"end equals start", `{"title":"a","startAt":"2023-12-10T03:00:00Z","endAt":"2023-12-10T04:00:00+01:00"}`, marquee.Problems{"endAt": "must be after startAt"}},
		{"end equals start after ms truncation", `{"title":"a","startAt":"2023-12-10T03:00:00.0001Z","endAt":"2023-12-10T03:00:00.0009Z"}`, marquee.Problems{"endAt": "must be after startAt"}},
		{"conditions scalar", `{"title":"a",` + window + `,"conditions":3}`, marquee.Problems{"conditions": "must be an object or an array of objects"}},
		{"condition not object", `{"title":"a",` + window + `,"conditions":[{},"x"]}`, marquee.Problems{"conditions[1]": "must be an object"}},
		{"condition unknown field", `{"title":"a",` + window + `,"conditions":{"age":3}}`, marquee.Problems{"conditions[0].age": "unknown field"}},
		{"age out of range", `{"title":"a",` + window + `,"conditions":[{"ageStart":0,"ageEnd":101}]}`, marquee.Problems{
			"conditions[0].ageStart": "must be an integer between 1 and 100", "conditions[0].ageEnd": "must be an integer between 1 and 100"}},
		{"age not integer", `{"title":"a",` + window + `,"conditions":[{"ageStart":20.5,"ageEnd":"30"}]}`, marquee.Problems{
			"conditions[0].ageStart": "must be an integer between 1 and 100", "conditions[0].ageEnd": "must be an integer between 1 and 100"}},
		{"age reversed", `{"title":"a",` + window + `,"conditions":[{"ageStart":31,"ageEnd":30}]}`, marquee.Problems{
			"conditions[0].ageStart": "must not be greater than ageEnd (31 > 30)"}},
		{"gender bad", `{"title":"a",` + window + `,"conditions":[{"gender":"X"},{"gender":["M","f"]}]}`, marquee.Problems{
			"conditions[0].gender": `must be "M" or "F", got "X"`, "conditions[1].gender[1]": `must be "M" or "F", got "f"`}},
		{"country bad", `{"title":"a",` + window + `,"conditions":[{"country":["TW","XX"]}]}`, marquee.Problems{
			"conditions[0].country[1]": `unknown ISO 3166-1 alpha-2 code "XX"`}},
		{"country wrong type", `{"title":"a",` + window + `,"conditions":[{"country":[1]},{"country":true}]}`, marquee.Problems{
			"conditions[0].country[0]": "must be a string", "conditions[1].country": "must be a string or an array of strings"}},
		{"platform bad", `{"title":"a",` + window + `,"conditions":{"platform":["ios","windows"]}}`, marquee.Problems{
			"conditions[0].platform[1]": `must be one of "android", "ios", "web", got "windows"`}},
		{"every problem at once", `{"title":"","startAt":"x","conditions":[{"ageStart":500,"country":"ZZ"}],"x":1}`, marquee.Problems{
			"title": "must not be empty", "startAt": `must be an RFC 3339 timestamp, got "x"`, "endAt": "is required", "x": "unknown field",
			"conditions[0].ageStart": "must be an integer between 1 and 100", "conditions[0].country": `unknown ISO 3166-1 alpha-2 code "ZZ"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := marquee.ParseAdInput([]byte(c.body))
			inv := marquee.AsError(err)
			if inv == nil || inv.Kind != marquee.KindInvalid {
				t.Fatalf("ParseAdInput(%s) error = %v; want a KindInvalid *Error", c.body, err)
			}
			if inv.Message != "invalid ad" || !maps.Equal(inv.Problems, c.want) {
				t.Fatalf("ParseAdInput(%s) = %q %v;\nwant %q %v", c.body, inv.Message, inv.Problems, "invalid ad", c.want)
			}
		})
	}
}

func TestParseAdInputNormalises(t *testing.T) {
	in, err := marquee.ParseAdInput([]byte(`{"title":" AD 55 ","startAt":"2023-12-10T11:00:00.1239+08:00","endAt":"2023-12-31T16:00:00Z",
		"conditions":{"ageStart":20,"gender":"F","country":["tw","JP","TW"],"platform":["IOS","android","ios"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2023, 12, 10, 3, 0, 0, 123e6, time.UTC); !in.StartAt.Equal(want) || in.StartAt.Location() != time.UTC {
		t.Errorf("StartAt = %v; want %v (UTC, ms)", in.StartAt, want)
	}
	if in.Title != " AD 55 " {
		t.Errorf("Title = %q; want it kept as sent", in.Title)
	}
	want := marquee.Condition{AgeStart: 20, Gender: []string{"F"}, Country: []string{"TW", "JP"}, Platform: []string{"ios", "android"}}
	if len(in.Conditions) != 1 || !equalCond(in.Conditions[0], want) {
		t.Errorf("Conditions = %+v; want [%+v]", in.Conditions, want)
	}
}

func TestParseAdInputEmptyMeansEveryone(t *testing.T) {
	for _, conds := range []string{``, `,"conditions":null`, `,"conditions":[]`, `,"conditions":{}`, `,"conditions":[{"country":[]}]`} {
		in, err := marquee.ParseAdInput([]byte(`{"title":"a",` + window + conds + `}`))
		if err != nil {
			t.Fatalf("conditions %s: %v", conds, err)
		}
		for _, c := range in.Conditions {
			if c.AgeStart != 0 || c.AgeEnd != 0 || c.Gender != nil || c.Country != nil || c.Platform != nil {
				t.Errorf("conditions %s = %+v; want no restriction", conds, in.Conditions)
			}
		}
	}
}

func TestValidateMatchesParse(t *testing.T) {
	in := marquee.AdInput{Title: "a", StartAt: time.Now(), EndAt: time.Now().Add(time.Hour),
		Conditions: []marquee.Condition{{AgeStart: 40, AgeEnd: 30, Country: []string{"tw", "QQ"}}}}
	err := in.Validate()
	inv := marquee.AsError(err)
	if inv == nil || inv.Kind != marquee.KindInvalid {
		t.Fatalf("Validate() = %v; want a KindInvalid *Error", err)
	}
	want := marquee.Problems{"conditions[0].ageStart": "must not be greater than ageEnd (40 > 30)",
		"conditions[0].country[1]": `unknown ISO 3166-1 alpha-2 code "QQ"`}
	if !maps.Equal(inv.Problems, want) {
		t.Fatalf("Validate() problems = %v; want %v", inv.Problems, want)
	}
}

func TestCountries(t *testing.T) {
	cs := marquee.Countries()
	if len(cs) != 249 {
		t.Fatalf("len(Countries()) = %d; want 249", len(cs))
	}
	for _, c := range cs {
		slot, ok := marquee.CountrySlot(strings.ToLower(c))
		if !ok || marquee.CountryCode(slot) != c {
			t.Errorf("CountrySlot(%q) = %d, %v", c, slot, ok)
		}
	}
	for _, bad := range []string{"", "X", "XX", "UK", "T1", "TWN"} {
		if _, ok := marquee.CountrySlot(bad); ok {
			t.Errorf("CountrySlot(%q) ok; want unknown", bad)
		}
	}
}

func equalCond(a, b marquee.Condition) bool {
	eq := func(x, y []string) bool { return strings.Join(x, ",") == strings.Join(y, ",") }
	return a.AgeStart == b.AgeStart && a.AgeEnd == b.AgeEnd && eq(a.Gender, b.Gender) && eq(a.Country, b.Country) && eq(a.Platform, b.Platform)
}
