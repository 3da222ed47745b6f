package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// saveMagic starts a saved index; a format change changes it.
const saveMagic = "marquee index v1\n"

// Save writes the index's ads — in their order, with their rendered
// items and compiled conditions — to w, so that Restore can load them
// without reading, decoding, rendering or sorting them again. It holds
// the builder's lock while encoding (index updates wait; queries do not),
// and writes after releasing it.
func (ix *Index) Save(w io.Writer) error {
	ix.bmu.Lock()
	size := 64
	for _, e := range ix.sorted {
		size += len(e.item) + 48
	}
	buf := make([]byte, 0, size)
	buf = append(buf, saveMagic...)
	buf = binary.AppendUvarint(buf, uint64(len(ix.sorted)))
	for _, e := range ix.sorted {
		buf = binary.AppendVarint(buf, e.id)
		buf = binary.AppendVarint(buf, e.startAt)
		buf = binary.AppendVarint(buf, e.endAt)
		buf = binary.AppendUvarint(buf, uint64(len(e.item)))
		buf = append(buf, e.item...)
		buf = binary.AppendUvarint(buf, uint64(len(e.conds)))
		for _, c := range e.conds {
			buf = append(buf, c.AgeLo, c.AgeHi, c.Genders, c.Platforms)
			buf = binary.AppendUvarint(buf, uint64(len(c.Countries)))
			for _, slot := range c.Countries {
				buf = binary.AppendUvarint(buf, uint64(slot))
			}
		}
	}
	ix.bmu.Unlock()
	buf = binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
	_, err := w.Write(buf)
	return err
}

// errCorrupt is Restore's error for data Save did not write.
var errCorrupt = errors.New("index: saved index is corrupt or of another version")

// Restore replaces the whole content of the index with what Save wrote.
// Data that is truncated, corrupt, of another version or out of order is
// an error, and leaves the index unchanged.
func (ix *Index) Restore(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(data) < len(saveMagic)+4 || string(data[:len(saveMagic)]) != saveMagic ||
		crc32.ChecksumIEEE(data[:len(data)-4]) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return errCorrupt
	}
	d := decoder{b: data[len(saveMagic) : len(data)-4]}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return errCorrupt
	}
	sorted := make([]*entry, 0, n)
	entries := make([]entry, n)
	byID := make(map[int64]*entry, n)
	for i := range entries {
		e := &entries[i]
		e.id, e.startAt, e.endAt = d.varint(), d.varint(), d.varint()
		e.item = d.bytes(d.uvarint()) // until the build copies it into its chunk
		nc := d.uvarint()
		if nc == 0 || nc > uint64(len(d.b)) {
			return errCorrupt
		}
		e.conds = make([]cond, nc)
		for j := range e.conds {
			c := &e.conds[j]
			b := d.bytes(4)
			if d.err != nil {
				return errCorrupt
			}
			c.AgeLo, c.AgeHi, c.Genders, c.Platforms = b[0], b[1], b[2], b[3]
			if nk := d.uvarint(); nk > 0 {
				if nk > uint64(len(d.b)) {
					return errCorrupt
				}
				c.Countries = make([]uint16, nk)
				for k := range c.Countries {
					c.Countries[k] = uint16(d.uvarint())
				}
			}
		}
		if len(e.conds) == 1 && e.conds[0].AgeLo == anyone[0].AgeLo && e.conds[0].AgeHi == anyone[0].AgeHi &&
			e.conds[0].Genders == 0 && e.conds[0].Platforms == 0 && e.conds[0].Countries == nil {
			e.conds = anyone
		}
		if d.err != nil || (len(sorted) > 0 && cmpEntries(sorted[len(sorted)-1], e) >= 0) || byID[e.id] != nil {
			return errCorrupt
		}
		sorted = append(sorted, e)
		byID[e.id] = e
	}
	if d.err != nil || len(d.b) != 0 {
		return errCorrupt
	}
	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	ix.byID, ix.sorted = byID, slices.Clip(sorted)
	ix.rebuild()
	return nil
}

// decoder reads what Save appended; the first short read sets err.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 { return next(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return next(d, binary.Varint) }

// next reads one value with read (binary.Uvarint or binary.Varint),
// which reports how many bytes it took, or n ≤ 0 for a short or bad one.
func next[T any](d *decoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail()
		var zero T
		return zero
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: short read", errCorrupt)
	}
	d.b = nil
}
