package reports_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"

	"marquee"
	"marquee/reportrow"
	"marquee/reports"
)

// BenchmarkWritten measures counting a batch of beacon lines as the
// collector hands them over (a flush every 10,000 lines is not part of
// it): ns/op is one event.
//
//	go test ./reports -run XXX -bench Written
func BenchmarkWritten(b *testing.B) {
	w := newWorld(b)
	at := time.Now()
	var lines strings.Builder
	for i := range 1000 {
		lines.WriteString(line(at, fmt.Sprintf(`"type":"impression","ad":"%d","campaign":"summer-sale","placement":"home-top","country":"TW","platform":"ios","uid":"u%06d"`, 1+i%50, i)))
	}
	batch := []byte(lines.String())
	b.SetBytes(int64(len(batch) / 1000))
	b.ReportAllocs()
	var off int64
	for b.Loop() {
		w.tl.Written("f", off, batch)
		off += int64(len(batch))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/event")
}

// BenchmarkWithAll builds a flush's sketch of all ads of a day from 2,000
// ads' sketches of 40 uids each (a busy instance's 10 s): ns/op is one
// flush's.
//
//	go test ./reports -run XXX -bench WithAll
func BenchmarkWithAll(b *testing.B) {
	var reach []reports.Reach
	for ad := range 2000 {
		sk := hyperloglog.New()
		for u := range 40 {
			sk.Insert(fmt.Appendf(nil, "%d-%d", ad, u))
		}
		enc, err := sk.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		reach = append(reach, reports.Reach{Entity: marquee.EntityAd, ID: int64(ad + 1), Day: 86400, Sketch: enc})
	}
	for b.Loop() {
		if _, err := reportrow.WithAll(reach); err != nil {
			b.Fatal(err)
		}
	}
}
