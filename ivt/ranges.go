package ivt

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"github.com/gaissmai/bart"

	"marquee/third_party/ipdata"
)

// Ranges are address ranges whose traffic is no person's (data centres,
// clouds, hosting): the hosting networks Marquee vendors
// (third_party/ipdata's datacenter-ranges.txt) and operators' files. A
// Ranges is not changed once read: it is safe for concurrent use.
type Ranges struct {
	t *bart.Lite
	n int
}

// MaxRangeLine bounds a line of a ranges file.
const MaxRangeLine = 4096

// ReadRanges reads the vendored hosting networks' ranges (with
// datacenters) and files of ranges: one CIDR prefix (10.0.0.0/8,
// 2001:db8::/32) or address a line; blank lines and text after a # are
// ignored. A line that is none of these is an error naming its file and
// line.
func ReadRanges(datacenters bool, files ...string) (*Ranges, error) {
	r := &Ranges{t: new(bart.Lite)}
	if datacenters {
		if err := r.read("datacenter-ranges.txt", bytes.NewReader(ipdata.DatacenterRanges)); err != nil {
			return nil, err
		}
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		err = r.read(name, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Ranges) read(name string, f io.Reader) error {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, MaxRangeLine), MaxRangeLine)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		p, err := parseRange(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %q is not a CIDR prefix or an address", name, n, line)
		}
		r.t.Insert(p)
		r.n++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func parseRange(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return p, err
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Contains reports whether ip is in one of the ranges (false on a nil
// Ranges).
func (r *Ranges) Contains(ip netip.Addr) bool {
	if r == nil || !ip.IsValid() {
		return false
	}
	return r.t.Lookup(ip.Unmap())
}

// Len is how many ranges were read.
func (r *Ranges) Len() int {
	if r == nil {
		return 0
	}
	return r.n
}
