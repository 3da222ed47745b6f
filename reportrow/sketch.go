package reportrow

import (
	"fmt"

	"github.com/axiomhq/hyperloglog"
)

// Reach sketches are HyperLogLog sketches of precision 14 (a standard
// error of 0.81%). The library keeps a sketch sparse (a sorted list of
// hashes) until it holds ~16,000 of them: compact, and cheap to merge a
// few uids into (a flush adds tens an ad), but slow to merge two large
// ones into (~600 µs at 5,000 uids each, against ~30 µs into a dense
// sketch's 16 KiB of registers). So a merge of many or large sketches
// (a report's union over days, the sketch of all ads of a day) goes into
// a dense sketch, and stored sketches stay as the library keeps them.
//
// denseFrom is the encoded size (~1,500 uids) past which a merge into a
// stored sketch goes through a dense one.
const denseFrom = 4 << 10

// DecodeSketch decodes an encoded sketch.
func DecodeSketch(b []byte) (*hyperloglog.Sketch, error) {
	sk := hyperloglog.New()
	if err := sk.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return sk, nil
}

// MergeSketches merges two encoded sketches; the store calls it to add a
// flush's sketch to the one it holds.
func MergeSketches(stored, add []byte) ([]byte, error) {
	a, err := DecodeSketch(stored)
	if err != nil {
		return nil, fmt.Errorf("stored sketch: %w", err)
	}
	b, err := DecodeSketch(add)
	if err != nil {
		return nil, err
	}
	u := Union{sk: a, own: true} // a is this merge's own: a small merge is fast into it as it is
	if len(stored) > denseFrom && len(add) > denseFrom {
		u = Union{}
		if err := u.Add(a); err != nil {
			return nil, err
		}
	}
	if err := u.Add(b); err != nil {
		return nil, err
	}
	return u.sk.MarshalBinary()
}

// Union merges sketches: a union of one is that sketch, and of more a
// dense sketch of its own (merging into a sparse one is the slow case
// above). The sketches added are read, never changed.
type Union struct {
	sk  *hyperloglog.Sketch
	own bool // sk is the union's own, to merge into
}

func (u *Union) Add(sk *hyperloglog.Sketch) error {
	if u.sk == nil {
		u.sk = sk
		return nil
	}
	if !u.own {
		d := hyperloglog.NewNoSparse()
		if err := d.Merge(u.sk); err != nil {
			return err
		}
		u.sk, u.own = d, true
	}
	return u.sk.Merge(sk)
}

// Estimate is the union's cardinality; 0 when nothing was added.
func (u *Union) Estimate() int64 {
	if u.sk == nil {
		return 0
	}
	return int64(u.sk.Estimate())
}

// WithAll adds to reach, for each entity and day it holds, the sketch of
// all its ads (or links) together, as ID 0: reports over every ad read
// one sketch a day instead of one an ad (merging them at read was most of
// the time of GET /api/v1/stats).
func WithAll(reach []Reach) ([]Reach, error) {
	type day struct {
		entity string
		day    int64
	}
	all := map[day]*hyperloglog.Sketch{}
	var order []day
	for _, r := range reach {
		if r.ID == 0 {
			continue
		}
		sk, err := DecodeSketch(r.Sketch)
		if err != nil {
			return nil, err
		}
		d := day{r.Entity, r.Day}
		if all[d] == nil {
			all[d] = hyperloglog.NewNoSparse() // the union of every ad is large: dense from the start
			order = append(order, d)
		}
		if err := all[d].Merge(sk); err != nil {
			return nil, err
		}
	}
	for _, d := range order {
		enc, err := all[d].MarshalBinary()
		if err != nil {
			return nil, err
		}
		reach = append(reach, Reach{Entity: d.entity, ID: 0, Day: d.day, Sketch: enc})
	}
	return reach, nil
}
