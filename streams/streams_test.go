package streams

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	known := []string{"brokers", "topic", "key"}
	for _, c := range []struct {
		in, want, err string
	}{
		{"brokers=a:9092,b:9092,topic=t", "brokers=a:9092,b:9092 topic=t", ""},
		{"topic=t, key=user", "key=user topic=t", ""},
		{"a:9092,topic=t", "", `"a:9092" is not name=value`},
		{"topik=t", "", `unknown option "topik"`},
		{"topic=a,topic=b", "", `option "topic" given twice`},
	} {
		got, err := ParseOptions("-f", c.in, known...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseOptions(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		var parts []string
		for k, v := range got {
			parts = append(parts, k+"="+v)
		}
		slices.Sort(parts)
		if err != nil || strings.Join(parts, " ") != c.want {
			t.Errorf("ParseOptions(%q) = %v, %v; want %s", c.in, parts, err, c.want)
		}
	}
}

// merge orders the lines of several files by their receivedAt, keeping
// each file's order among equal stamps, in chunks whose offsets say
// where each line is in its file: checked against a stable sort.
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for round := range 200 {
		type line struct {
			file   string
			offset int64
			text   string
		}
		var sources []chunk
		var all []line
		for f := range 1 + r.IntN(5) {
			name := fmt.Sprintf("f%d", f)
			start := int64(r.IntN(100))
			var data []byte
			at := base
			for n := range r.IntN(30) {
				at = at.Add(time.Duration(r.IntN(3)) * time.Millisecond) // equal stamps too
				text := fmt.Sprintf(`{"receivedAt":"%s","n":"%s-%d"}`, at.Format("2006-01-02T15:04:05.000000000Z"), name, n)
				all = append(all, line{name, start + int64(len(data)), text})
				data = append(append(data, text...), '\n')
			}
			sources = append(sources, chunk{file: name, offset: start, data: data})
		}
		want := slices.Clone(all)
		slices.SortStableFunc(want, func(a, b line) int { return strings.Compare(a.text[:45], b.text[:45]) })
		var got []line
		for _, c := range merge(sources) {
			off := c.offset
			for l := range strings.SplitSeq(strings.TrimSuffix(string(c.data), "\n"), "\n") {
				got = append(got, line{c.file, off, l})
				off += int64(len(l) + 1)
			}
		}
		// Among equal stamps of different files either order is right:
		// compare the stamps' order and each file's own order.
		if len(got) != len(want) {
			t.Fatalf("round %d: merge gave %d lines; want %d", round, len(got), len(want))
		}
		for i := range got {
			if got[i].text[:45] != want[i].text[:45] {
				t.Fatalf("round %d: line %d = %s; want the stamp of %s", round, i, got[i].text, want[i].text)
			}
		}
		pos := map[string]int64{}
		for _, l := range got {
			if l.offset < pos[l.file] {
				t.Fatalf("round %d: %s at %d after %d: a file's lines out of order", round, l.file, l.offset, pos[l.file])
			}
			pos[l.file] = l.offset
			if !slices.Contains(all, l) {
				t.Fatalf("round %d: line %+v is not where its file has it", round, l)
			}
		}
	}
}
