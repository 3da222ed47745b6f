package marquee_test

import (
	"encoding/json"
	"strings"
	"testing"

	"marquee"
)

// TestParseTrafficking: labels, roadblocks and rotation read, defaulted
// and refused naming the field; the approval's moves.
func TestParseTrafficking(t *testing.T) {
	in, err := marquee.ParseCampaignInput([]byte(`{` + flight + `,"labels":[{"name":" Airline ","exclusive":true},{"name":"travel"}],"roadblock":"all-or-none",` +
		`"rotation":{"type":"optimized"}}`))
	if err != nil || len(in.Labels) != 2 || in.Labels[0] != (marquee.Label{Name: "airline", Exclusive: true}) || in.Roadblock != "all-or-none" ||
		in.Rotation.Type != "optimized" || in.Rotation.MinImpressions != marquee.DefaultMinImpressions {
		t.Fatalf("trafficking = %+v (%+v), %v", in, in.Rotation, err)
	}
	in, err = marquee.ParseCampaignInput([]byte(`{` + flight + `,"rotation":{"type":"weighted","weights":{"12":3,"13":1}}}`))
	if err != nil || in.Rotation.AdWeight(12) != 3 || in.Rotation.AdWeight(99) != 1 {
		t.Fatalf("weighted = %+v, %v", in.Rotation, err)
	}
	in, err = marquee.ParseCampaignInput([]byte(`{` + flight + `,"frequencyCap":{"count":3,"window":"24h"},"rotation":{"type":"sequential","sequence":["3",1,"2"]}}`))
	if err != nil || in.Rotation.SequenceOf(3) != 0 || in.Rotation.SequenceOf(2) != 2 || in.Rotation.SequenceOf(9) != 3 {
		t.Fatalf("sequential = %+v, %v", in.Rotation, err)
	}
	b, _ := json.Marshal(in.Settings())
	if !strings.Contains(string(b), `"rotation":{"type":"sequential","sequence":["3","1","2"]}`) {
		t.Errorf("settings = %s; want the sequence as ids", b)
	}
	if in.MaxPerPage != 1 {
		t.Errorf("maxPerPage = %d by default; want 1", in.MaxPerPage)
	}
	if in, err = marquee.ParseCampaignInput([]byte(`{` + flight + `,"maxPerPage":3}`)); err != nil || in.MaxPerPage != 3 {
		t.Errorf("maxPerPage 3 = %d, %v", in.MaxPerPage, err)
	}
	var old marquee.CampaignInput // a document stored before maxPerPage
	if old.SetSettings(marquee.CampaignSettings{}); old.MaxPerPage != 1 {
		t.Errorf("a stored campaign without maxPerPage reads %d; want 1", old.MaxPerPage)
	}
	refuses(t, "ParseCampaignInput", marquee.ParseCampaignInput, []badInput{
		{`{` + flight + `,"labels":"airline"}`, "labels", "array"},
		{`{` + flight + `,"labels":[{"name":""}]}`, "labels[0].name", "1 to 64 bytes"},
		{`{` + flight + `,"labels":[{"name":"a"},{"name":"A"}]}`, "labels[1].name", "labels[0]'s too"},
		{`{` + flight + `,"labels":[{"name":"a","exclusive":"yes"}]}`, "labels[0].exclusive", "true or false"},
		{`{` + flight + `,"labels":[{"name":"a","colour":"red"}]}`, "labels[0].colour", "unknown"},
		{`{` + flight + `,"roadblock":"all"}`, "roadblock", "all-or-none, as-many-as-possible"},
		{`{` + flight + `,"rotation":{"type":"random"}}`, "rotation.type", "one of"},
		{`{` + flight + `,"maxPerPage":0}`, "maxPerPage", "from 1 to 20"},
		{`{` + flight + `,"maxPerPage":21}`, "maxPerPage", "from 1 to 20"},
		{`{` + flight + `,"maxPerPage":"2"}`, "maxPerPage", "integer"},
		{`{` + flight + `,"maxPerPage":2,"roadblock":"all-or-none"}`, "maxPerPage", "roadblock"},
		{`{` + flight + `,"rotation":{"type":"even","weights":{"1":2}}}`, "rotation.weights", "weighted rotation only"},
		{`{` + flight + `,"rotation":{"type":"weighted","weights":{"1":0}}}`, "rotation.weights.1", "1 to 1000"},
		{`{` + flight + `,"rotation":{"type":"weighted","weights":{"x":2}}}`, "rotation.weights", "not an ad's id"},
		{`{` + flight + `,"rotation":{"type":"sequential","sequence":["1"]}}`, "rotation.type", "frequencyCap"},
		{`{` + flight + `,"frequencyCap":{"count":3,"window":"24h"},"rotation":{"type":"sequential","sequence":["1","1"]}}`, "rotation.sequence[1]", "twice"},
		{`{` + flight + `,"rotation":{"type":"optimized","minImpressions":1}}`, "rotation.minImpressions", "from 10"},
	})
}

// TestMoves: every action against every state: allowed, repeated (a
// no-op), or a conflict naming both.
func TestMoves(t *testing.T) {
	for _, c := range []struct {
		action, from string
		ok           bool
	}{
		{"submit", "draft", true}, {"submit", "pending", true}, {"submit", "active", false},
		{"approve", "draft", true}, {"approve", "pending", true}, {"approve", "active", true}, {"approve", "paused", false},
		{"reject", "pending", true}, {"reject", "draft", false}, {"reject", "active", false},
		{"pause", "active", true}, {"pause", "draft", false}, {"resume", "paused", true}, {"resume", "pending", false},
		{"archive", "draft", true}, {"archive", "paused", true}, {"archive", "archived", true},
		{"submit", "archived", false}, {"approve", "archived", false},
	} {
		err := marquee.Moves[c.action].Check(7, c.from)
		if (err == nil) != c.ok || err != nil && (marquee.KindOf(err) != marquee.KindConflict || !strings.Contains(err.Error(), "campaign 7 is "+c.from)) {
			t.Errorf("%s from %s = %v; want allowed %v (else a conflict naming the state)", c.action, c.from, err, c.ok)
		}
	}
	if _, err := marquee.ParseReason([]byte(`{"reason":"  "}`)); err == nil {
		t.Error("a blank reason was taken")
	}
}
