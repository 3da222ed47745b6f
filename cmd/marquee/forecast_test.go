package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestForecastBacktestCommand: marquee forecast backtest prints each
// targeting's error and the MAPE line; bad flags are refused.
func TestForecastBacktestCommand(t *testing.T) {
	t.Parallel()
	out, errOut, err := runCLI(t, "", "forecast", "backtest", "-per-hour", "300", "-weeks", "5", "-held-out", "1")
	if err != nil || !regexp.MustCompile(`(?m)^MAPE 0\.\d{3} over \d+ days of 1 held-out weeks`).MatchString(out) || !strings.Contains(out, "country TW") {
		t.Fatalf("forecast backtest = %v\n%s%s", err, out, errOut)
	}
	if _, _, err := runCLI(t, "", "forecast", "backtest", "-held-out", "12"); err == nil {
		t.Error("forecast backtest -held-out 12 of 12 weeks succeeded; want a usage error")
	}
}
