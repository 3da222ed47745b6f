package index_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"marquee/index"
)

// TestSaveRestore: an index restored from what Save wrote answers every
// query exactly as the index it was saved from, including after updates;
// damaged data is refused and leaves the index as it was.
func TestSaveRestore(t *testing.T) {
	ix, now := filled(t, 5000)
	r := rand.New(rand.NewPCG(7, 8))
	ix.Put(randomAd(r, 3), randomAd(r, 6000)) // a patched master: a replaced ad and a new one
	ix.Delete(10, 11)
	var saved bytes.Buffer
	if err := ix.Save(&saved); err != nil {
		t.Fatal(err)
	}
	restored := index.New(func() time.Time { return now })
	if err := restored.Restore(bytes.NewReader(saved.Bytes())); err != nil {
		t.Fatal(err)
	}
	a, b := ix.Snapshot(), restored.Snapshot()
	if a.Len() != b.Len() {
		t.Fatalf("restored %d ads; want %d", b.Len(), a.Len())
	}
	for i := range 2000 {
		q := mixedQuery(r, 50)
		if got, want := b.AppendPage(nil, &q, now), a.AppendPage(nil, &q, now); !bytes.Equal(got, want) {
			t.Fatalf("query %d %+v: restored index = %s; saved one = %s", i, q, got, want)
		}
	}
	// Updates after a restore work as on a loaded index.
	restored.Delete(1)
	ix.Delete(1)
	q := index.Query{Limit: 100}
	if got, want := restored.Snapshot().AppendPage(nil, &q, now), ix.Snapshot().AppendPage(nil, &q, now); !bytes.Equal(got, want) {
		t.Fatalf("after a delete: %s; want %s", got, want)
	}

	// Damage is refused, and the index keeps what it had.
	data := saved.Bytes()
	for _, bad := range [][]byte{data[:len(data)/2], append([]byte("x"), data[1:]...), flip(data, len(data)/3), nil} {
		if err := restored.Restore(bytes.NewReader(bad)); err == nil {
			t.Fatalf("Restore of %d damaged bytes succeeded", len(bad))
		}
	}
	if restored.Snapshot().Len() != ix.Snapshot().Len() {
		t.Fatal("a refused Restore changed the index")
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x40
	return c
}

// BenchmarkRestore restores 1,000,000 saved ads (what a start from a
// saved index costs in the index).
//
//	go test ./index -run XXX -bench Restore -benchtime 3x
func BenchmarkRestore(b *testing.B) {
	ix, now := filled(b, 1_000_000)
	var saved bytes.Buffer
	if err := ix.Save(&saved); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r := index.New(func() time.Time { return now })
		if err := r.Restore(bytes.NewReader(saved.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
