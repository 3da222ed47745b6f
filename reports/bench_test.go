package reports_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
