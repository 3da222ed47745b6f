package delivery

import (
	"time"
)

// span is a flight or an ad's window in unix nanoseconds, compared
// without time.Time's monotonic clock logic.
type span struct{ start, end int64 }

func spanOf(start, end time.Time) span { return span{start.UnixNano(), end.UnixNano()} }

// has reports whether start < at < end.
func (s span) has(at int64) bool { return s.start < at && at < s.end }
