package main

import (
	"context"
	"fmt"
	"io"

	"marquee/forecast"
)

const forecastUsage = `usage: marquee forecast backtest [flags]

  backtest  generate traffic with daily and weekly seasonality, a trend and
            noise; forecast each of the last held-out weeks from the weeks
            before it; print each targeting's error and the MAPE; then
            replay a week through the decision engine with -booked
            campaigns and print the forecast's contention error
            (docs/benchmarks.md, "Forecasts")
`

// runForecast runs marquee forecast SUBCOMMAND.
func runForecast(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, forecastUsage, stdout)
	if err != nil {
		return err
	}
	if sub != "backtest" {
		return unknownSubcommand("forecast", sub, "backtest")
	}
	fs := newFlags("forecast backtest", "forecast backtest [flags]",
		"Backtests the forecasts on generated traffic: each targeting's mean absolute percentage error, day by day, over the held-out weeks.", stderr)
	c := forecast.DefaultBacktest
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "the generated traffic's seed")
	fs.IntVar(&c.Weeks, "weeks", c.Weeks, "weeks of traffic in all")
	fs.IntVar(&c.HeldOut, "held-out", c.HeldOut, "the last weeks forecast, each from the weeks before it")
	fs.Float64Var(&c.PerHour, "per-hour", c.PerHour, "requests an average hour of the first week")
	fs.Float64Var(&c.Trend, "trend", c.Trend, "growth a week (0.02: 2%)")
	fs.Float64Var(&c.Noise, "noise", c.Noise, "an hour's relative noise (standard deviation)")
	fs.IntVar(&c.SampleRate, "sample-rate", c.SampleRate, "requests kept an hour in the sample the shares are read from")
	fs.IntVar(&c.Model.Weeks, "model-weeks", forecast.DefaultWeeks, "past weeks the model reads")
	booked := 0
	fs.IntVar(&booked, "booked", forecast.DefaultContention.Booked, "booked campaigns of the contention check, which replays a week through the decision engine (0: no check)")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if c.Weeks < 2 || c.HeldOut < 1 || c.HeldOut >= c.Weeks || c.SampleRate < 1 || c.PerHour <= 0 {
		return usageError{fmt.Errorf("forecast backtest: want -weeks ≥ 2, 1 ≤ -held-out < -weeks, -sample-rate ≥ 1 and -per-hour > 0")}
	}
	res := forecast.Backtest(c, stdout)
	fmt.Fprintf(stdout, "MAPE %.3f over %d days of %d held-out weeks; the 80%% range held the actual %.0f%% of them\n",
		res.MAPE, res.Days, c.HeldOut, 100*res.Coverage)
	if booked > 0 {
		cc := forecast.DefaultContention
		cc.Seed, cc.Booked, cc.SampleRate = c.Seed, booked, c.SampleRate
		forecast.Contention(cc, stdout)
	}
	return nil
}
