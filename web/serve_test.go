package web_test

import (
	"crypto/rand"
	"marquee/ivt"
	"math"

	"marquee/privacy"
	"marquee/serve"
)

// service is a test server's serving (web.Deps.Serve): c, its lines into
// l's sink under a balanced privacy policy when c has none, its ledger
// l, which bills c's engine.
func service(c serve.Config, l serve.LedgerConfig) *serve.Service {
	if c.Lines == nil {
		pol, err := privacy.NewPolicy(privacy.Balanced, []byte(rand.Text()), 0)
		if err != nil {
			panic(err)
		}
		c.Lines = serve.NewLines(l.Sink, pol, nil)
	}
	l.Engine = c.Engine
	c.Ledger = serve.NewLedger(l)
	if c.IVT == nil {
		// The tests' and benchmarks' clients are one address and a few
		// users: their events a minute are counted (what velocity costs),
		// never past.
		c.IVT = ivt.New(ivt.Config{UserEvents: math.MaxInt32, AddressEvents: math.MaxInt32})
	}
	return serve.New(c)
}
