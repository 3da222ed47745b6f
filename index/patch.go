package index

import (
	"sort"
	"time"
)

// chunkOf returns the position of the chunk whose range holds the key
// (endAt, id): the last chunk whose lo is at or before it, or the first.
func (s *Snapshot) chunkOf(endAt, id int64) int {
	i := sort.Search(len(s.chunks), func(i int) bool {
		c := s.chunks[i]
		return c.loEnd > endAt || c.loEnd == endAt && c.loID > id
	})
	return max(i-1, 0)
}

// patch returns a snapshot built at now from old and sorted, the master
// copy (sorted by (endAt, id), without ads ended by now): the chunks at the
// positions in touched (ascending, unique) are cut again from the master's
// ads in their ranges — with the next chunk when they would be small — and
// the others are shared, except those whose ads have all ended, which are
// dropped. A change to a few ads thus costs a few chunks, whatever the size
// of the catalog.
func patch(old *Snapshot, sorted []*entry, now time.Time, touched []int) *Snapshot {
	if len(old.chunks) == 0 {
		return build(sorted, now)
	}
	nowNs := now.UnixNano()
	// start returns where chunk i's range starts in sorted.
	start := func(i int) int {
		switch {
		case i == 0:
			return 0
		case i >= len(old.chunks):
			return len(sorted)
		}
		c := old.chunks[i]
		return sort.Search(len(sorted), func(j int) bool {
			e := sorted[j]
			return e.endAt > c.loEnd || e.endAt == c.loEnd && e.id >= c.loID
		})
	}
	chunks := make([]*chunk, 0, len(old.chunks)+len(touched))
	for i := 0; i < len(old.chunks); {
		if len(touched) == 0 || touched[0] > i {
			if c := old.chunks[i]; c.lastEnd() > nowNs {
				chunks = append(chunks, c)
			}
			i++
			continue
		}
		// A run [i, j) of touched chunks, cut again together.
		j := i + 1
		for touched = touched[1:]; len(touched) > 0 && touched[0] == j; touched = touched[1:] {
			j++
		}
		lo, hi := start(i), start(j)
		for hi-lo < chunkAds/4 && j < len(old.chunks) {
			if len(touched) > 0 && touched[0] == j {
				touched = touched[1:]
			}
			j++
			hi = start(j)
		}
		chunks = appendCut(chunks, sorted[lo:hi], nowNs)
		i = j
	}
	return newSnapshot(now, chunks)
}

// appendCut appends entries cut into chunks of chunkAds/2 to chunkAds ads.
func appendCut(chunks []*chunk, entries []*entry, now int64) []*chunk {
	k := (len(entries) + chunkAds - 1) / chunkAds
	for p := range k {
		chunks = append(chunks, buildChunk(entries[p*len(entries)/k:(p+1)*len(entries)/k], now))
	}
	return chunks
}
