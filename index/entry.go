package index

import (
	"bytes"
	"encoding/json"

	"marquee"
	"marquee/targeting"
)

// cond is a compiled condition: the targeting package owns the rule.
type cond = targeting.Cond

// entry is one ad as the index's master copy holds it: its sort key, its
// pre-rendered list item and its compiled conditions. Only the index's
// builder (under bmu) reads an entry; a chunk build points item at the
// chunk's copy of it, so the bytes are held once.
type entry struct {
	id             int64
	startAt, endAt int64  // unix nanoseconds
	item           []byte // the rendered item, without a comma
	conds          []cond // never empty: no condition is one open cond
}

// anyone is the condition of an ad without conditions.
var anyone = []cond{targeting.Anyone}

func newEntry(a *marquee.Ad) *entry {
	e := &entry{
		id:      a.ID,
		startAt: a.StartAt.UnixNano(),
		endAt:   a.EndAt.UnixNano(),
		item:    renderItem(a),
		conds:   anyone,
	}
	if len(a.Conditions) > 0 {
		e.conds = targeting.CompileAll(a.Conditions)
	}
	return e
}

// renderItem renders the list item of an ad exactly as GET /api/v1/ad
// returns it.
func renderItem(a *marquee.Ad) []byte {
	var title bytes.Buffer
	enc := json.NewEncoder(&title)
	enc.SetEscapeHTML(false) // as every other response: "<" stays "<"
	enc.Encode(a.Title)      // a string always encodes
	b := make([]byte, 0, title.Len()+48)
	b = append(b, `{"title":`...)
	b = append(b, bytes.TrimSuffix(title.Bytes(), []byte("\n"))...)
	b = append(b, `,"endAt":"`...)
	b = a.EndAt.UTC().AppendFormat(b, marquee.TimeLayout)
	return append(b, `"}`...)
}

// less orders entries by (endAt, id): the order of GET /api/v1/ad.
func less(a, b *entry) bool {
	if a.endAt != b.endAt {
		return a.endAt < b.endAt
	}
	return a.id < b.id
}

func cmpEntries(a, b *entry) int {
	switch {
	case less(a, b):
		return -1
	case less(b, a):
		return 1
	}
	return 0
}
