package targeting

import (
	"cmp"
	"math/bits"
	"slices"
	"strconv"
)

// Filter answers, for a list of trees and a viewer, which trees the
// viewer may meet, in bitset operations instead of one evaluation per
// tree: the in, notIn and range rules at a tree's top level (the tree itself, or
// the rules its all holds) are indexed like the ad index indexes
// countries — for each key and value, the trees that take it or exclude
// it. A bit Eligible leaves set is a tree whose indexed rules the viewer
// meets: the caller still matches its whole tree, but a viewer that fails
// an indexed rule costs nothing per tree (a section every campaign
// excludes, a region none targets). Its cost is the viewer's values times
// the trees that name them (and the range rules of its keys), plus a few
// words per 64 trees for each key. It is never
// mutated after NewFilter.
type Filter struct {
	n    int
	dims []dim
}

// dim is one key (or reserved field) the trees' top-level rules read.
type dim struct {
	field uint8
	key   string
	// free: the trees with no indexed rule on the key; notIns: those
	// whose indexed rule is a notIn.
	free, notIns []uint64
	// byValue[v]: the trees whose in takes v and those whose notIn holds
	// it; ranges: the trees whose gte/lte rule reads the key.
	byValue map[string]*valuePostings
	ranges  []numRange
}

// valuePostings are the trees whose in takes a value (accept) and those
// whose notIn holds it (reject).
type valuePostings struct{ accept, reject postings }

// numRange is a range rule, and the trees that have it.
type numRange struct {
	lo, hi float64
	trees  *postings
}

// postings are tree numbers, in order, and once built (dense), the same
// as a bitset when it is no longer than the list: applying them costs the
// shorter of the two.
type postings struct {
	list []int32
	bits []uint64
}

func (p *postings) add(i int32) { p.list = append(p.list, i) }

// build sets bits when a bitset of words words is no longer than list.
func (p *postings) build(words int) {
	if len(p.list) >= words {
		p.bits = make([]uint64, words)
		for _, i := range p.list {
			p.bits[i>>6] |= 1 << (i & 63)
		}
	}
}

// or sets the bits of the trees in dst.
func (p *postings) or(dst []uint64) {
	if p.bits != nil {
		for w, b := range p.bits {
			dst[w] |= b
		}
		return
	}
	for _, i := range p.list {
		dst[i>>6] |= 1 << (i & 63)
	}
}

// andNot clears the bits of the trees in dst.
func (p *postings) andNot(dst []uint64) {
	if p.bits != nil {
		for w, b := range p.bits {
			dst[w] &^= b
		}
		return
	}
	for _, i := range p.list {
		dst[i>>6] &^= 1 << (i & 63)
	}
}

// NewFilter indexes trees (nil: a tree that takes everyone); nil when no
// tree has an indexable rule.
func NewFilter(trees []*Tree) *Filter {
	f := &Filter{n: len(trees)}
	words := (len(trees) + 63) / 64
	find := func(r *rule) int {
		for k := range f.dims {
			if d := &f.dims[k]; d.field == r.field && d.key == r.key {
				return k
			}
		}
		d := dim{field: r.field, key: r.key, free: make([]uint64, words), notIns: make([]uint64, words),
			byValue: map[string]*valuePostings{}}
		SetAll(d.free, len(trees)) // until a tree's rule on the key says otherwise
		f.dims = append(f.dims, d)
		return len(f.dims) - 1
	}
	for i, t := range trees {
		if t == nil {
			continue
		}
		for _, r := range t.indexed { // one rule of a key at most (split)
			d := &f.dims[find(r)]
			d.free[i>>6] &^= 1 << (i & 63)
			if r.op == opRange {
				j := slices.IndexFunc(d.ranges, func(x numRange) bool { return x.lo == r.lo && x.hi == r.hi })
				if j < 0 {
					d.ranges, j = append(d.ranges, numRange{r.lo, r.hi, &postings{}}), len(d.ranges)
				}
				d.ranges[j].trees.add(int32(i))
				continue
			}
			if r.op == opNotIn {
				d.notIns[i>>6] |= 1 << (i & 63)
			}
			for _, v := range r.vals {
				vp := d.byValue[v]
				if vp == nil {
					vp = &valuePostings{}
					d.byValue[v] = vp
				}
				if r.op == opNotIn {
					vp.reject.add(int32(i))
				} else {
					vp.accept.add(int32(i))
				}
			}
		}
	}
	if len(f.dims) == 0 {
		return nil
	}
	for k := range f.dims {
		d := &f.dims[k]
		for _, vp := range d.byValue {
			vp.accept.build(words)
			vp.reject.build(words)
		}
		for _, rg := range d.ranges {
			rg.trees.build(words)
		}
	}
	// The keys that constrain the most trees first: a request they
	// exclude is answered sooner (Eligible stops when none is left).
	slices.SortStableFunc(f.dims, func(a, b dim) int { return cmp.Compare(ones(a.free), ones(b.free)) })
	return f
}

// SetAll sets the first n bits of b (its (n+63)/64 words) and clears the
// rest of its last word.
func SetAll(b []uint64, n int) {
	for i := range b {
		b[i] = ^uint64(0)
	}
	if r := n & 63; r != 0 && len(b) > 0 {
		b[len(b)-1] = 1<<r - 1
	}
}

func ones(b []uint64) int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// split divides the tree's top-level rules — its all's, or the tree —
// into those a Filter indexes (the first in, notIn or range rule of each
// key, but on $ip) and the rest, which MatchesRest evaluates.
func (t *Tree) split() {
	top := []*rule{&t.root}
	if t.root.op == opAll {
		top = top[:0]
		for i := range t.root.kids {
			top = append(top, &t.root.kids[i])
		}
	}
	for _, r := range top {
		indexable := (r.op == opIn || r.op == opNotIn || r.op == opRange) && r.field != fieldIP &&
			!slices.ContainsFunc(t.indexed, func(x *rule) bool { return x.field == r.field && x.key == r.key })
		if indexable {
			t.indexed = append(t.indexed, r)
		} else {
			t.rest = append(t.rest, r)
		}
	}
}

// MatchesRest reports whether v meets the rules of the tree a Filter does
// not index: what is left to check of a tree whose bit Eligible set.
// It allocates nothing.
func (t *Tree) MatchesRest(v *Viewer, at int64) bool {
	var c Clock
	return t.MatchesRestOn(v, at, &c)
}

// MatchesRestOn is MatchesRest reading the local time from c (kept for
// trees of c's time zone at the same at).
func (t *Tree) MatchesRestOn(v *Viewer, at int64, c *Clock) bool {
	if t == nil {
		return true
	}
	if c.loc != t.loc {
		*c = Clock{loc: t.loc}
	}
	for _, r := range t.rest {
		if !t.match(r, v, at, t.loc, &c.clock) {
			return false
		}
	}
	return true
}

// MatchesOn is Matches with the day-parts read on c (a decision's
// clock, shared by the trees it checks), as MatchesRestOn reads them.
func (t *Tree) MatchesOn(v *Viewer, at int64, c *Clock) bool {
	if t == nil {
		return true
	}
	if c.loc != t.loc {
		*c = Clock{loc: t.loc}
	}
	return t.match(&t.root, v, at, t.loc, &c.clock)
}

// Words is how many words Eligible writes, and its scratch holds.
func (f *Filter) Words() int { return (f.n + 63) / 64 }

// Eligible writes into dst (Words long) a bit for each tree whose indexed
// rules v meets, using tmp (as long) as scratch, and returns how many.
// It allocates nothing.
func (f *Filter) Eligible(v *Viewer, dst, tmp []uint64) int {
	SetAll(dst, f.n)
	for k := range f.dims {
		d := &f.dims[k]
		for i := range tmp {
			tmp[i] = d.free[i] | d.notIns[i]
		}
		d.apply(v, tmp)
		var left uint64
		for i := range dst {
			dst[i] &= tmp[i]
			left |= dst[i]
		}
		if left == 0 {
			return 0 // a rule every tree has excludes v: the rest need not be read
		}
	}
	n := 0
	for _, w := range dst {
		n += bits.OnesCount64(w)
	}
	return n
}

// apply turns p (free | notIns) into the trees dimension d lets v
// through: those v's values take (an in, a range), and not those they
// exclude (a notIn).
func (d *dim) apply(v *Viewer, p []uint64) {
	one, kvs := d.values(v)
	if one != "" {
		if vp := d.byValue[one]; vp != nil {
			vp.accept.or(p)
			vp.reject.andNot(p)
		}
		d.applyRanges(one, p)
		return
	}
	rejected := false
	for _, kv := range kvs {
		if vp := d.byValue[kv.Value]; vp != nil {
			vp.accept.or(p)
			rejected = rejected || len(vp.reject.list) > 0
		}
		d.applyRanges(kv.Value, p)
	}
	if rejected { // after every accept: an exclusion wins
		for _, kv := range kvs {
			if vp := d.byValue[kv.Value]; vp != nil {
				vp.reject.andNot(p)
			}
		}
	}
}

// applyRanges adds to p the trees whose range rule takes val.
func (d *dim) applyRanges(val string, p []uint64) {
	if len(d.ranges) == 0 {
		return
	}
	if x, err := strconv.ParseFloat(val, 64); err == nil {
		for _, rg := range d.ranges {
			if x >= rg.lo && x <= rg.hi {
				rg.trees.or(p)
			}
		}
	}
}

// values is v's value of a reserved field (one, "" when unknown), or its
// values of a publisher's key (kvs).
func (d *dim) values(v *Viewer) (one string, kvs []KV) {
	if d.field != fieldKV {
		return v.field(d.field), nil
	}
	return "", v.values(d.key)
}
