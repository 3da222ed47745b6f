package reports

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
	u := union{sk: a, own: true} // a is this merge's own: a small merge is fast into it as it is
	if len(stored) > denseFrom && len(add) > denseFrom {
		u = union{}
		if err := u.add(a); err != nil {
			return nil, err
		}
	}
	if err := u.add(b); err != nil {
		return nil, err
	}
	return u.sk.MarshalBinary()
}

// union merges sketches: a union of one is that sketch, and of more a
// dense sketch of its own (merging into a sparse one is the slow case
// above). The sketches added are read, never changed.
type union struct {
	sk  *hyperloglog.Sketch
	own bool // sk is the union's own, to merge into
}

func (u *union) add(sk *hyperloglog.Sketch) error {
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

// estimate is the union's cardinality; 0 when nothing was added.
func (u *union) estimate() int64 {
	if u.sk == nil {
		return 0
	}
	return int64(u.sk.Estimate())
}

// reach estimates the uniques of sketches in all, and in each of n
// buckets: bucket tells a sketch's (by its day), or -1 for none.
func reach(sketches []Reach, n int, bucket func(day int64) int) (int64, []int64, error) {
	var all union
	per := make([]union, n)
	for _, r := range sketches {
		sk, err := DecodeSketch(r.Sketch)
		if err != nil {
			return 0, nil, fmt.Errorf("reach of %s %d: %w", r.Entity, r.ID, err)
		}
		if err := all.add(sk); err != nil {
			return 0, nil, err
		}
		if i := bucket(r.Day); i >= 0 && i < n {
			if err := per[i].add(sk); err != nil {
				return 0, nil, err
			}
		}
	}
	estimates := make([]int64, n)
	for i := range per {
		estimates[i] = per[i].estimate()
	}
	return all.estimate(), estimates, nil
}
