package reports

import (
	"strings"
	"sync"
	"testing"

	"marquee"
	"marquee/reportrow"
)

// Counts from many goroutines, taken while they run: every slot is in
// exactly one take, whatever the interleaving (go test -race).
func TestRequestsTakeWhileCounting(t *testing.T) {
	t.Parallel()
	r := NewRequests()
	const workers, each = 4, 20_000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				k := RequestKey{Placement: int64(1 + i%7), Hour: 3600, Country: [2]byte{'T', 'W'}, Device: uint8(w % 3)}
				r.Count(k, marquee.Outcome(i%int(marquee.NumOutcomes)))
			}
		})
	}
	var total int64
	byOutcome := [marquee.NumOutcomes]int64{}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		default:
		}
		for _, row := range r.take() {
			total += row.Requests()
			for o, n := range row.Outcomes {
				byOutcome[o] += n
			}
		}
	}
	for _, row := range r.take() {
		total += row.Requests()
		for o, n := range row.Outcomes {
			byOutcome[o] += n
		}
	}
	if total != workers*each {
		t.Fatalf("took %d slots; want %d", total, workers*each)
	}
	for o, n := range byOutcome {
		if want := int64(workers * (each / int(marquee.NumOutcomes))); n < want || n > want+workers {
			t.Errorf("outcome %s: %d; want about %d", marquee.Outcome(o), n, want)
		}
	}
	if rows := r.take(); len(rows) != 0 {
		t.Errorf("a take after all was taken = %v; want none", rows)
	}
}

// Keys of hours no decision counts any more leave the table, after one
// more take (a Count that read them just before is not lost); the current
// hours' stay.
func TestRequestsRetireOldHours(t *testing.T) {
	t.Parallel()
	r := NewRequests()
	old, cur := RequestKey{Placement: 1, Hour: 0}, RequestKey{Placement: 1, Hour: 3 * 3600}
	r.Count(old, marquee.Filled)
	c := (*r.table.Load())[old] // a Count that read the table before the take
	r.Count(cur, marquee.Filled)
	if rows := r.take(); len(rows) != 2 {
		t.Fatalf("first take = %v; want both hours", rows)
	}
	if _, ok := (*r.table.Load())[old]; ok {
		t.Fatalf("the hour 3 hours old is still in the table")
	}
	c[marquee.CappedOut].Add(1) // it adds after the take
	rows := r.take()
	if len(rows) != 1 || rows[0].Hour != 0 || rows[0].Outcomes[marquee.CappedOut] != 1 {
		t.Fatalf("second take = %+v; want the late count of the retired hour", rows)
	}
	r.Count(cur, marquee.House)
	if rows := r.take(); len(rows) != 1 || rows[0].Hour != cur.Hour || rows[0].Outcomes[marquee.House] != 1 {
		t.Fatalf("third take = %+v; want the current hour's", rows)
	}
}

// The stored columns of the outcomes are the vocabulary's names.
func TestOutcomeColumns(t *testing.T) {
	t.Parallel()
	for o, name := range marquee.OutcomeNames {
		if want := "o_" + strings.ToLower(name); reportrow.OutcomeColumns[o] != want {
			t.Errorf("column of %s = %q; want %q", name, reportrow.OutcomeColumns[o], want)
		}
	}
}
