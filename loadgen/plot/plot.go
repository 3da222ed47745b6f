// Package plot draws a benchmark's report (package loadgen): throughput
// over time and the latency percentile curve, as SVG or PNG. It is
// apart from loadgen, and used only by cmd/marquee-plot, so that the
// server's binary carries no charting library or its fonts.
package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"marquee/loadgen"
)

// Write draws the report's runs — throughput over time above, the
// latency percentile curve below — as SVG, or as PNG when name ends in
// ".png", to w.
func Write(w io.Writer, rep *loadgen.Report, name string) error {
	tput := plot.New()
	tput.Title.Text = fmt.Sprintf("%s: throughput over time", rep.Scenario)
	tput.X.Label.Text = "seconds"
	tput.Y.Label.Text = "responses / s"
	tput.Legend.Top = true
	tput.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ticks := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ticks {
			if ticks[i].Label != "" {
				ticks[i].Label = loadgen.HumanInt(ticks[i].Value)
			}
		}
		return ticks
	})

	lat := plot.New()
	lat.Title.Text = "latency by percentile"
	lat.X.Label.Text = "percentile"
	lat.Y.Label.Text = "ms (log scale)"
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	lat.X.Tick.Marker = percentileTicks{}
	lat.Legend.Top = true
	lat.Legend.Left = true

	for i, r := range rep.Runs {
		if r.Kind == "warmup" {
			continue
		}
		label := runLabel(r)
		style := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.2)}
		if r.Server == "hello" {
			style.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		ts := make(plotter.XYs, 0, len(r.Series))
		for _, s := range r.Series {
			ts = append(ts, plotter.XY{X: float64(s.Elapsed) / 1e9, Y: s.ReqPerSec})
		}
		cs := make(plotter.XYs, 0, len(r.Curve))
		for _, c := range r.Curve {
			if c.Q < 1 && c.LatencyUs > 0 {
				cs = append(cs, plotter.XY{X: -math.Log10(1 - c.Q), Y: c.LatencyUs / 1000})
			}
		}
		for _, p := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{tput, ts}, {lat, cs}} {
			if len(p.xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(p.xys)
			if err != nil {
				return err
			}
			l.LineStyle = style
			p.p.Add(l)
			p.p.Legend.Add(label, l)
		}
	}
	tput.Y.Min = 0

	width, height := 8*vg.Inch, 8*vg.Inch
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	if strings.EqualFold(filepath.Ext(name), ".png") {
		c := vgimg.New(width, height)
		canvas = pngCanvas{c, vgimg.PngCanvas{Canvas: c}}
	} else {
		canvas = vgsvg.New(width, height)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(18)}
	cells := plot.Align([][]*plot.Plot{{tput}, {lat}}, tiles, dc)
	tput.Draw(cells[0][0])
	lat.Draw(cells[1][0])
	_, err := canvas.WriteTo(w)
	return err
}

// pngCanvas draws on an image canvas and writes it as PNG.
type pngCanvas struct {
	*vgimg.Canvas
	png vgimg.PngCanvas
}

func (c pngCanvas) WriteTo(w io.Writer) (int64, error) { return c.png.WriteTo(w) }

func runLabel(r loadgen.RunReport) string {
	switch {
	case r.Kind == "max":
		return r.Server + " max"
	case r.Rate > 0:
		return fmt.Sprintf("%s open %s/s", r.Server, loadgen.HumanInt(r.Rate))
	}
	return fmt.Sprintf("%s round %d", r.Server, r.Round)
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
}

// percentileTicks labels an axis of -log10(1-q) with percentiles: 0 is 0%,
// 1 is 90%, 2 is 99%, and so on.
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}
	var out []plot.Tick
	for i, l := range labels {
		if x := float64(i); x >= lo && x <= hi {
			out = append(out, plot.Tick{Value: x, Label: l})
		}
	}
	return out
}

// WriteFile draws the report to the file name (.svg or .png).
func WriteFile(rep *loadgen.Report, name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := Write(f, rep, name); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
