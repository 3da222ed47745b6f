package web_test

import (
	"crypto/rand"

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
	return serve.New(c)
}
