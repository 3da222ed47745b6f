// Command marquee-plot draws the charts of a `marquee bench -json`
// report: throughput over time above, the latency percentile curve below,
// as SVG, or PNG when the output's name ends in .png.
//
//	marquee bench -scenario ads -rounds 5 -baseline -json ads.json
//	go run ./cmd/marquee-plot -o ads.svg ads.json
//
// It is a command of its own so that the server's binary carries no
// charting library (gonum/plot and its fonts: 4.4 MB).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"marquee/loadgen"
	"marquee/loadgen/plot"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "marquee-plot:", err)
		os.Exit(1)
	}
}

// run draws the report args name to the -o file.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("marquee-plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the chart to write: FILE.svg or FILE.png (required)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: marquee-plot -o FILE.svg|FILE.png REPORT.json  (a report of marquee bench -json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want -o FILE and one report")
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var rep loadgen.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: not a report of marquee bench -json: %w", fs.Arg(0), err)
	}
	if len(rep.Runs) == 0 {
		return fmt.Errorf("%s: a report without runs", fs.Arg(0))
	}
	return plot.WriteFile(&rep, *out)
}
