package marquee_test

import (
	"encoding/json"
	"math"
	"testing"

	"marquee"
)

// TestMicros: amounts are read exactly (no float on the way), written
// back exactly, and refused beyond six decimals, below 0, past 10⁹ or
// in another shape; a multiply-divide rounds half up in 128 bits.
func TestMicros(t *testing.T) {
	for _, c := range []struct {
		in   string
		want marquee.Micros
		out  string
	}{
		{"0", 0, "0"}, {"2.5", 2_500_000, "2.5"}, {"0.000001", 1, "0.000001"}, {"1000000000", 1_000_000_000_000_000, "1000000000"},
		{"1.234567", 1_234_567, "1.234567"}, {".5", 500_000, "0.5"}, {"4.10", 4_100_000, "4.1"}, {"0.1", 100_000, "0.1"},
	} {
		got, err := marquee.ParseMicros(c.in)
		if err != nil || got != c.want || got.String() != c.out {
			t.Errorf("ParseMicros(%q) = %d (%s), %v; want %d (%s)", c.in, got, got.String(), err, c.want, c.out)
		}
	}
	for _, bad := range []string{"", ".", "1.", "-1", "1e3", "0.0000001", "1000000000.000001", "12345678901", "1,5", " 1", "0x10", "NaN"} {
		if got, err := marquee.ParseMicros(bad); err == nil {
			t.Errorf("ParseMicros(%q) = %d; want an error", bad, got)
		}
	}
	var m struct{ A, B marquee.Micros }
	if err := json.Unmarshal([]byte(`{"A":"0.3","B":0.1}`), &m); err != nil || m.A+m.B != 400_000 {
		t.Errorf("0.3 + 0.1 from JSON = %d, %v; want exactly 400,000 micro-units", m.A+m.B, err)
	}
	if b, _ := json.Marshal(m); string(b) != `{"A":0.3,"B":0.1}` {
		t.Errorf("Marshal = %s; want the decimals as given", b)
	}
	if err := json.Unmarshal([]byte(`{"A":"0.12345678"}`), &m); err != nil || m.A != 123_457 {
		t.Errorf("a stored amount of 8 decimals = %d, %v; want it rounded to 123,457 micro-units", m.A, err)
	}
	for _, c := range []struct {
		m        marquee.Micros
		num, den int64
		want     marquee.Micros
	}{
		{1_000_000, 1, 3, 333_333}, {2_000_000, 1, 3, 666_667}, {1, 1, 2, 1}, {8_642, 1000, 7, 1_234_571},
		{marquee.MaxAmount, math.MaxInt32, math.MaxInt32, marquee.MaxAmount}, // the product overflows 64 bits
		{5, 0, 3, 0}, {5, 3, 0, 0},
	} {
		if got := c.m.MulDiv(c.num, c.den); got != c.want {
			t.Errorf("%d.MulDiv(%d, %d) = %d; want %d", c.m, c.num, c.den, got, c.want)
		}
	}
	if got := marquee.Nanos(8_641_969).Micros(); got != 8_642 {
		t.Errorf("Nanos(8,641,969).Micros() = %d; want 8,642", got)
	}
}
