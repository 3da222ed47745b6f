package targeting

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
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
	// accept[v]: the trees whose in takes v; reject[v]: those whose
	// notIn holds v (tree numbers); ranges: the trees whose gte/lte
	// rule reads the key.
	accept, reject map[string]*postings
	ranges         []numRange
}

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
		f.dims = append(f.dims, dim{field: r.field, key: r.key, free: make([]uint64, words), notIns: make([]uint64, words),
			accept: map[string]*postings{}, reject: map[string]*postings{}})
		return len(f.dims) - 1
	}
	indexed := make([][]int, len(trees)) // the dims each tree has an indexed rule on
	for i, t := range trees {
		for _, r := range t.topLevel() {
			if r.op != opIn && r.op != opNotIn && r.op != opRange || r.field == fieldIP {
				continue
			}
			k := find(r)
			if slices.Contains(indexed[i], k) {
				continue // a second rule on the key: left to the tree
			}
			indexed[i] = append(indexed[i], k)
			d := &f.dims[k]
			if r.op == opRange {
				j := slices.IndexFunc(d.ranges, func(x numRange) bool { return x.lo == r.lo && x.hi == r.hi })
				if j < 0 {
					d.ranges, j = append(d.ranges, numRange{r.lo, r.hi, &postings{}}), len(d.ranges)
				}
				d.ranges[j].trees.add(int32(i))
				continue
			}
			into := d.accept
			if r.op == opNotIn {
				into = d.reject
				d.notIns[i>>6] |= 1 << (i & 63)
			}
			for _, v := range r.vals {
				if into[v] == nil {
					into[v] = &postings{}
				}
				into[v].add(int32(i))
			}
		}
	}
	if len(f.dims) == 0 {
		return nil
	}
	for k := range f.dims {
		d := &f.dims[k]
		for i := range trees {
			if !slices.Contains(indexed[i], k) {
				d.free[i>>6] |= 1 << (i & 63)
			}
		}
		for _, m := range []map[string]*postings{d.accept, d.reject} {
			for _, p := range m {
				p.build(words)
			}
		}
		for _, rg := range d.ranges {
			rg.trees.build(words)
		}
	}
	return f
}

// topLevel is the rules whose every one a viewer must meet: the tree's
// all's, or the tree.
func (t *Tree) topLevel() []*rule {
	if t == nil {
		return nil
	}
	if t.root.op == opAll {
		out := make([]*rule, len(t.root.kids))
		for i := range t.root.kids {
			out[i] = &t.root.kids[i]
		}
		return out
	}
	return []*rule{&t.root}
}

// Words is how many words Eligible writes, and its scratch holds.
func (f *Filter) Words() int { return (f.n + 63) / 64 }

// Eligible writes into dst (Words long) a bit for each tree whose indexed
// rules v meets, using tmp (as long) as scratch, and returns how many.
// It allocates nothing.
func (f *Filter) Eligible(v *Viewer, dst, tmp []uint64) int {
	for i := range dst {
		dst[i] = ^uint64(0)
	}
	if r := f.n & 63; r != 0 {
		dst[len(dst)-1] = 1<<r - 1
	}
	for k := range f.dims {
		d := &f.dims[k]
		for i := range tmp {
			tmp[i] = d.free[i] | d.notIns[i]
		}
		d.apply(v, tmp)
		for i := range dst {
			dst[i] &= tmp[i]
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
	for k := -1; k < len(kvs); k++ {
		val := one
		if k >= 0 {
			val = kvs[k].Value
		} else if val == "" {
			continue
		}
		if a := d.accept[val]; a != nil {
			a.or(p)
		}
		if len(d.ranges) > 0 {
			if x, err := strconv.ParseFloat(val, 64); err == nil {
				for _, rg := range d.ranges {
					if x >= rg.lo && x <= rg.hi {
						rg.trees.or(p)
					}
				}
			}
		}
	}
	for k := -1; k < len(kvs); k++ {
		val := one
		if k >= 0 {
			val = kvs[k].Value
		} else if val == "" {
			continue
		}
		if r := d.reject[val]; r != nil {
			r.andNot(p)
		}
	}
}

// values is v's value of a reserved field (one, "" when unknown), or its
// values of a publisher's key (kvs).
func (d *dim) values(v *Viewer) (one string, kvs []KV) {
	if d.field != fieldKV {
		return v.field(d.field), nil
	}
	i, _ := slices.BinarySearchFunc(v.KV, d.key, func(kv KV, k string) int { return strings.Compare(kv.Key, k) })
	j := i
	for j < len(v.KV) && v.KV[j].Key == d.key {
		j++
	}
	return "", v.KV[i:j]
}
