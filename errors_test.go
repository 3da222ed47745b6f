package marquee_test

import (
	"errors"
	"fmt"
	"testing"

	"marquee"
)

func TestErrorKinds(t *testing.T) {
	cause := errors.New("connection refused")
	for _, c := range []struct {
		err  error
		kind marquee.Kind
		text string
	}{
		{nil, marquee.KindInternal, ""},
		{errors.New("boom"), marquee.KindInternal, "boom"},
		{marquee.NoAd(7), marquee.KindNotFound, "ad 7 not found"},
		{fmt.Errorf("get link: %w", marquee.NoLink("ab")), marquee.KindNotFound, `get link: no link "ab"`},
		{marquee.Unavailable(cause), marquee.KindUnavailable, "store unavailable: connection refused"},
		{marquee.Invalid("invalid ad", marquee.Problems{"title": "is required", "endAt": "is required"}), marquee.KindInvalid,
			"invalid ad: endAt: is required; title: is required"},
		{marquee.Errorf(marquee.KindConflict, "code %q is taken", "x"), marquee.KindConflict, `code "x" is taken`},
	} {
		if got := marquee.KindOf(c.err); got != c.kind {
			t.Errorf("KindOf(%v) = %v; want %v", c.err, got, c.kind)
		}
		if c.err != nil && c.err.Error() != c.text {
			t.Errorf("Error() = %q; want %q", c.err.Error(), c.text)
		}
	}
	if err := marquee.Invalid("invalid ad", marquee.Problems{}); err != nil {
		t.Errorf("Invalid with no problems = %v; want nil", err)
	}
	if !errors.Is(marquee.Unavailable(cause), cause) {
		t.Error("Unavailable(cause) does not unwrap to its cause")
	}
}
