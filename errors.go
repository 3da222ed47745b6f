package marquee

import (
	"errors"
	"sort"
	"strings"
)

// ErrNotFound is returned (wrapped) when an entity with the requested id does
// not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned (wrapped, with a message a client may see) when
// a write clashes with what is stored: a code that is taken, a link that
// only its ad may change.
var ErrConflict = errors.New("conflict")

// ErrUnavailable is returned (wrapped) when the store cannot be reached; a
// caller should retry later.
var ErrUnavailable = errors.New("store unavailable")

// ErrOverloaded is returned (wrapped, with a message a client may see) when
// a bounded buffer is full; a caller should retry later.
var ErrOverloaded = errors.New("overloaded")

// Problems maps a field path, such as "conditions[0].country[1]", to what is
// wrong with the value found there.
type Problems map[string]string

// InvalidError reports input that failed validation. What names the kind of
// input ("invalid ad", "invalid query"); Problems names every bad field.
type InvalidError struct {
	What     string
	Problems Problems
}

func (e *InvalidError) Error() string {
	keys := make([]string, 0, len(e.Problems))
	for k := range e.Problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(e.What)
	for i, k := range keys {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(e.Problems[k])
	}
	return b.String()
}

// invalid returns nil when p is empty, else an *InvalidError.
func invalid(what string, p Problems) error {
	if len(p) == 0 {
		return nil
	}
	return &InvalidError{What: what, Problems: p}
}
