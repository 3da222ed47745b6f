package reports

import (
	"fmt"

	"marquee/reportrow"
)

// The rows reports are stored as live in reportrow, where a store
// uses them without the rest of reports; these are their names here.
type (
	Key      = reportrow.Key
	Counts   = reportrow.Counts
	Row      = reportrow.Row
	DimRow   = reportrow.DimRow
	Reach    = reportrow.Reach
	FileMark = reportrow.FileMark
	Batch    = reportrow.Batch
	SumQuery = reportrow.SumQuery
	Sum      = reportrow.Sum
)

// reach estimates the uniques of sketches in all, and in each of n
// buckets: bucket tells a sketch's (by its day), or -1 for none.
func reach(sketches []Reach, n int, bucket func(day int64) int) (int64, []int64, error) {
	var all reportrow.Union
	per := make([]reportrow.Union, n)
	for _, r := range sketches {
		sk, err := reportrow.DecodeSketch(r.Sketch)
		if err != nil {
			return 0, nil, fmt.Errorf("reach of %s %d: %w", r.Entity, r.ID, err)
		}
		if err := all.Add(sk); err != nil {
			return 0, nil, err
		}
		if i := bucket(r.Day); i >= 0 && i < n {
			if err := per[i].Add(sk); err != nil {
				return 0, nil, err
			}
		}
	}
	estimates := make([]int64, n)
	for i := range per {
		estimates[i] = per[i].Estimate()
	}
	return all.Estimate(), estimates, nil
}
