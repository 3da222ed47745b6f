package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"marquee"
)

// Demand partners for `marquee bench -partners N`: N buyers on loopback,
// each answering every bid request after -partner-delay with a bid on its
// first impression (a CPM from 0.50 to 5.00), registered as partners of
// the in-process server's store before it starts.

// fakeBuyers starts n buyers answering after delay; stop closes them and
// says how many bid requests they answered (on stderr).
func fakeBuyers(n int, delay time.Duration, seed uint64, stderr io.Writer) (addrs []string, stop func(), err error) {
	var servers []*fasthttp.Server
	var answered atomic.Int64
	stop = func() {
		for _, s := range servers {
			s.Shutdown()
		}
		fmt.Fprintf(stderr, "partners: %d bid requests answered by %d buyers\n", answered.Load(), n)
	}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, nil, err
		}
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		var pool fastjson.ParserPool
		s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
			p := pool.Get()
			defer pool.Put(p)
			v, err := p.ParseBytes(ctx.PostBody())
			if err != nil {
				ctx.SetStatusCode(fasthttp.StatusBadRequest)
				return
			}
			time.Sleep(delay)
			answered.Add(1)
			id, imp := v.GetStringBytes("id"), v.GetStringBytes("imp", "0", "id")
			cpm := 0.5 + 4.5*r.Float64()
			ctx.SetContentType("application/json")
			fmt.Fprintf(ctx, `{"id":%s,"cur":"USD","seatbid":[{"seat":"s","bid":[{"id":"b","impid":%s,"price":%s,"w":300,"h":250,"adm":"<div>a buyer's ad</div>"}]}]}`,
				strconv.Quote(string(id)), strconv.Quote(string(imp)), strconv.FormatFloat(cpm, 'f', 2, 64))
		}}
		servers = append(servers, s)
		go s.Serve(ln)
		addrs = append(addrs, "http://"+ln.Addr().String()+"/")
	}
	return addrs, stop, nil
}

// addPartners registers the buyers at addrs as partners of the store db
// (banner, a timeout of 150 ms).
func addPartners(ctx context.Context, db string, addrs []string, stderr io.Writer) error {
	st, err := openStore(ctx, db, jsonLog(stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	for i, a := range addrs {
		if _, err := st.CreateDemandPartner(ctx, marquee.DemandPartner{Name: fmt.Sprintf("bench-%d", i+1), Endpoint: a,
			Formats: []string{marquee.FormatBanner}, TimeoutMS: 150, BidAdjustment: 1}); err != nil {
			return err
		}
	}
	return nil
}
