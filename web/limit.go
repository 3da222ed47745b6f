package web

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// limitListener bounds the connections served at once, in all and from
// one IP. A connection over a bound is answered at once — 503 (all) or
// 429 (one IP), JSON, with Retry-After — and closed, so that a flood of
// connections costs the server a few bytes each, never a goroutine
// waiting on a read.
type limitListener struct {
	net.Listener
	max, perIP int
	refused    *prometheus.CounterVec

	mu   sync.Mutex
	open int
	byIP map[netip.Addr]int
}

// Listen returns ln bounded by cfg.MaxConns and cfg.MaxConnsPerIP (0: no
// bound), counting refusals in the server's metrics.
func (s *Server) Listen(ln net.Listener) net.Listener {
	if s.cfg.MaxConns <= 0 && s.cfg.MaxConnsPerIP <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, max: s.cfg.MaxConns, perIP: s.cfg.MaxConnsPerIP, refused: s.metrics.connsRefused,
		byIP: map[netip.Addr]int{}}
}

// refusal is the whole answer to a connection over a bound.
func refusal(status, reason, msg string) []byte {
	body := `{"error":"` + msg + `"}`
	return []byte("HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

var (
	tooManyConns       = refusal("503", "Service Unavailable", "too many connections; retry later")
	tooManyConnsFromIP = refusal("429", "Too Many Requests", "too many connections from your address; retry later")
)

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteAddr(c)
		l.mu.Lock()
		var answer []byte
		reason := ""
		switch {
		case l.max > 0 && l.open >= l.max:
			answer, reason = tooManyConns, "total"
		case l.perIP > 0 && l.byIP[ip] >= l.perIP:
			answer, reason = tooManyConnsFromIP, "per ip"
		default:
			l.open++
			l.byIP[ip]++
		}
		l.mu.Unlock()
		if answer == nil {
			return &limitedConn{Conn: c, l: l, ip: ip}, nil
		}
		l.refused.WithLabelValues(reason).Inc()
		go func() { // never block Accept on a client
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(answer)
			c.Close()
		}()
	}
}

func remoteAddr(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip.Unmap()
	}
	return netip.Addr{}
}

// limitedConn gives its place back when closed (once).
type limitedConn struct {
	net.Conn
	l    *limitListener
	ip   netip.Addr
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		if c.l.byIP[c.ip]--; c.l.byIP[c.ip] <= 0 {
			delete(c.l.byIP, c.ip)
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
