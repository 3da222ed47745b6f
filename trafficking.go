package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Trafficking settings of a campaign (docs/api.md#trafficking): labels
// for competitive exclusion, roadblocks, and how its ads rotate.

// Label names what a campaign is ("airline", "auto"). An exclusive label
// keeps two campaigns that carry it off one page: a decision never
// chooses two campaigns sharing a label that either of them marks
// exclusive.
type Label struct {
	Name      string `json:"name"`
	Exclusive bool   `json:"exclusive,omitempty"`
}

// Label bounds: how many a campaign carries, and the longest name in
// bytes.
const (
	MaxLabels   = 20
	MaxLabelLen = 64
)

// Roadblocks: a campaign that takes a page's placements together. All or
// none: it fills every placement its ads are limited to that the request
// has, or none of them (and serves nowhere when the request lacks one);
// as many as possible: it fills as many of them as it can. Its ads each
// name the placements they fill; an ad of a roadblock without
// placements never serves.
const (
	RoadblockAllOrNone = "all-or-none"
	RoadblockAsMany    = "as-many-as-possible"
)

// Roadblocks lists the roadblock kinds.
var Roadblocks = []string{RoadblockAllOrNone, RoadblockAsMany}

// Rotation types: how a campaign's eligible ads share its serves.
const (
	RotateEven       = "even"       // each as likely
	RotateWeighted   = "weighted"   // in proportion to Weights
	RotateSequential = "sequential" // a user's n-th serve shows the n-th of Sequence (needs a frequency cap, which counts the serves)
	RotateOptimized  = "optimized"  // more of the ads with the better click-through rate, once each has MinImpressions
)

// RotationTypes lists the rotation types.
var RotationTypes = []string{RotateEven, RotateWeighted, RotateSequential, RotateOptimized}

// Rotation bounds.
const (
	MaxRotationAds           = 100 // ads named in Weights or Sequence
	DefaultMinImpressions    = 1000
	MinMinImpressions        = 10
	MaxMinImpressions        = 10_000_000
	MaxAdWeight              = 1000
	DefaultOptimizedExplore  = 10 // percent of an optimized campaign's serves kept even
	DefaultRotationAdsWeight = 1
)

// Rotation is how a campaign's ads share its serves. Ads are named by id
// (as strings, like every id the API answers).
type Rotation struct {
	Type string `json:"type"`
	// Weights, for weighted: an ad's weight (1–1000); an ad not named
	// weighs 1.
	Weights map[string]int `json:"weights,omitempty"`
	// Sequence, for sequential: the ads in the order a user sees them;
	// ads not named follow, by id. After the last, a user starts again.
	Sequence []string `json:"sequence,omitempty"`
	// MinImpressions, for optimized: the impressions every eligible ad
	// has before click-through rates decide (until then, even).
	MinImpressions int64 `json:"minImpressions,omitempty"`
}

// AdWeight is ad id's weight under r: its Weights' entry, else 1.
func (r *Rotation) AdWeight(id int64) int {
	if w, ok := r.Weights[strconv.FormatInt(id, 10)]; ok {
		return w
	}
	return DefaultRotationAdsWeight
}

// SequenceOf is where ad id stands in r's Sequence (0 first), or
// len(Sequence) when it is not named.
func (r *Rotation) SequenceOf(id int64) int {
	if i := slices.Index(r.Sequence, strconv.FormatInt(id, 10)); i >= 0 {
		return i
	}
	return len(r.Sequence)
}

// parseLabels reads a campaign's labels: names lower-cased and trimmed,
// each once.
func parseLabels(raw json.RawMessage, p Problems) []Label {
	var objs []json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &objs) != nil {
		p["labels"] = `must be an array of {"name", "exclusive"}`
		return nil
	}
	if len(objs) > MaxLabels {
		p["labels"] = fmt.Sprintf("must hold at most %d labels", MaxLabels)
		return nil
	}
	out := make([]Label, 0, len(objs))
	for i, o := range objs {
		path := fmt.Sprintf("labels[%d]", i)
		fields, ok := subObject(o, path, p, "name", "exclusive")
		if !ok {
			continue
		}
		var l Label
		raw, ok := present(fields, "name")
		switch {
		case !ok:
			p[path+".name"] = "is required"
			continue
		case json.Unmarshal(raw, &l.Name) != nil:
			p[path+".name"] = "must be a string"
			continue
		}
		l.Name = strings.ToLower(strings.TrimSpace(l.Name))
		if l.Name == "" || len(l.Name) > MaxLabelLen || strings.ContainsFunc(l.Name, isControl) {
			p[path+".name"] = fmt.Sprintf("must be 1 to %d bytes without control characters", MaxLabelLen)
			continue
		}
		if raw, ok := present(fields, "exclusive"); ok && json.Unmarshal(raw, &l.Exclusive) != nil {
			p[path+".exclusive"] = "must be true or false"
			continue
		}
		if j := slices.IndexFunc(out, func(x Label) bool { return x.Name == l.Name }); j >= 0 {
			p[path+".name"] = fmt.Sprintf("is labels[%d]'s too", j)
			continue
		}
		out = append(out, l)
	}
	return out
}

// parseRotation reads a campaign's rotation; capped says whether the
// campaign has a frequency cap (sequential rotation counts a user's serves
// with it).
func parseRotation(raw json.RawMessage, capped bool, p Problems) *Rotation {
	fields, ok := subObject(raw, "rotation", p, "type", "weights", "sequence", "minImpressions")
	if !ok {
		return nil
	}
	r := &Rotation{Type: requiredOneOf(fields, "type", "rotation", RotationTypes, p)}
	only := func(k, typ string) bool {
		_, given := present(fields, k)
		if given && r.Type != typ {
			p["rotation."+k] = "applies to " + typ + " rotation only"
			return false
		}
		return given
	}
	if only("weights", RotateWeighted) {
		raw, _ := present(fields, "weights")
		if json.Unmarshal(raw, &r.Weights) != nil || len(r.Weights) > MaxRotationAds {
			p["rotation.weights"] = fmt.Sprintf(`must be an object of at most %d ad ids and their weights ({"12": 3})`, MaxRotationAds)
			r.Weights = nil
		}
		for id, w := range r.Weights {
			if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 || strconv.FormatInt(n, 10) != id {
				p["rotation.weights"] = fmt.Sprintf("%q is not an ad's id", id)
			} else if w < 1 || w > MaxAdWeight {
				p["rotation.weights."+id] = fmt.Sprintf("must be an integer from 1 to %d", MaxAdWeight)
			}
		}
	}
	if only("sequence", RotateSequential) {
		raw, _ := present(fields, "sequence")
		var ids []json.RawMessage
		if json.Unmarshal(raw, &ids) != nil || len(ids) > MaxRotationAds {
			p["rotation.sequence"] = fmt.Sprintf("must be an array of at most %d ad ids", MaxRotationAds)
		}
		for _, id := range distinctIDs(ids, "rotation.sequence", "an ad's id", p) {
			r.Sequence = append(r.Sequence, strconv.FormatInt(id, 10))
		}
	}
	if only("minImpressions", RotateOptimized) {
		raw, _ := present(fields, "minImpressions")
		if json.Unmarshal(raw, &r.MinImpressions) != nil || r.MinImpressions < MinMinImpressions || r.MinImpressions > MaxMinImpressions {
			p["rotation.minImpressions"] = fmt.Sprintf("must be an integer from %d to %d", MinMinImpressions, MaxMinImpressions)
		}
	} else if r.Type == RotateOptimized {
		r.MinImpressions = DefaultMinImpressions
	}
	if r.Type == RotateSequential && !capped {
		p["rotation.type"] = "sequential rotation counts a user's serves with the frequency cap: set frequencyCap (the sequence restarts as the cap's window frees serves)"
	}
	return r
}

// MaxBulk is how many campaigns one bulk request may name.
const MaxBulk = 500

// BulkInput is a change to many campaigns at once: an Action of Moves
// (pause, resume, archive, submit, approve), or Targeting set (SetTargeting;
// nil clears it) on each of IDs.
type BulkInput struct {
	IDs          []int64
	Action       string
	SetTargeting bool
	Targeting    *Targeting
}

// BulkActions are the actions a bulk request may take (a rejection needs
// a reason of its own for each campaign: one at a time).
var BulkActions = []string{ActionPause, ActionResume, ActionArchive, ActionSubmit, ActionApprove}

// ParseBulkInput reads {"ids": [...], "action": "pause"} or {"ids": [...],
// "targeting": {...} | null}: 1 to MaxBulk distinct campaign ids, and
// exactly one of action and targeting.
func ParseBulkInput(body []byte) (BulkInput, error) {
	var in BulkInput
	p := Problems{}
	fields, ok := object(body, p, "ids", "action", "targeting")
	if !ok {
		return in, Invalid("invalid bulk change", p)
	}
	raw, ok := present(fields, "ids")
	var ids []json.RawMessage
	switch {
	case !ok:
		p["ids"] = "is required"
	case json.Unmarshal(raw, &ids) != nil || len(ids) == 0 || len(ids) > MaxBulk:
		p["ids"] = fmt.Sprintf("must be an array of 1 to %d campaign ids", MaxBulk)
	}
	in.IDs = distinctIDs(ids, "ids", "a campaign's id", p)
	_, hasAction := present(fields, "action")
	_, hasTargeting := fields["targeting"] // null clears it
	switch {
	case hasAction == hasTargeting:
		p["action"] = "give exactly one of action (" + strings.Join(BulkActions, ", ") + ") and targeting"
	case hasAction:
		in.Action = oneOfField(fields, "action", BulkActions, "", p)
	default:
		in.SetTargeting = true
		if raw, ok := present(fields, "targeting"); ok {
			in.Targeting = parseTargeting(raw, "targeting", p)
		}
	}
	return in, Invalid("invalid bulk change", p)
}

// ParseCloneName reads the optional body of a campaign's clone,
// {"name": "…"} (empty: the original's name with " (copy)").
func ParseCloneName(body []byte) (string, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return "", nil
	}
	p := Problems{}
	fields, ok := object(body, p, "name")
	if !ok {
		return "", Invalid("invalid clone", p)
	}
	name := nameField(fields, "name", false, p)
	return name, Invalid("invalid clone", p)
}

// CopyName is the name of a copy of a campaign named name: " (copy)"
// added, cut to MaxNameLen characters.
func CopyName(name string) string {
	const suffix = " (copy)"
	r := []rune(name)
	if n := MaxNameLen - len([]rune(suffix)); len(r) > n {
		r = r[:n]
	}
	return string(r) + suffix
}

// distinctIDs reads raws as ids (strings or numbers), each once, naming
// a problem as path[i]: one that is not what, one named twice.
func distinctIDs(raws []json.RawMessage, path, what string, p Problems) []int64 {
	var out []int64
	for i, one := range raws {
		id, ok := ParseID(one)
		switch {
		case !ok:
			p[fmt.Sprintf("%s[%d]", path, i)] = "must be " + what
		case slices.Contains(out, id):
			p[fmt.Sprintf("%s[%d]", path, i)] = "is named twice"
		default:
			out = append(out, id)
		}
	}
	return out
}
