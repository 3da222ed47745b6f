package web

import (
	"bytes"
	"fmt"
	"strings"

	"marquee"
)

// LinkDomains are the hosts short links are served on: each of Names is
// a namespace of codes of its own, and a request to any other host is
// the default domain's (or, with UnknownHost404, a 404). Default is the
// default domain's own name, if it has one: a link given it as its
// domain is stored on the default domain, and requests to it are the
// default domain's even with UnknownHost404.
type LinkDomains struct {
	Names          []string // lower case, without the default
	Default        string
	UnknownHost404 bool
}

// ParseLinkDomains reads -link-domains (a comma-separated list),
// -default-domain and -unknown-hosts (default or 404).
func ParseLinkDomains(list, def, unknown string) (LinkDomains, error) {
	var d LinkDomains
	if def != "" {
		name, msg := marquee.NormDomain(def)
		if msg != "" {
			return d, fmt.Errorf("-default-domain: %s", msg)
		}
		d.Default = name
	}
	for s := range strings.SplitSeq(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		name, msg := marquee.NormDomain(s)
		if msg != "" {
			return d, fmt.Errorf("-link-domains: %s", msg)
		}
		if name != d.Default && !d.has(name) {
			d.Names = append(d.Names, name)
		}
	}
	switch unknown {
	case "", "default":
	case "404":
		if d.Default == "" {
			return d, fmt.Errorf("-unknown-hosts 404 needs -default-domain (the host the default domain's links are served on)")
		}
		d.UnknownHost404 = true
	default:
		return d, fmt.Errorf("-unknown-hosts: want default or 404, got %q", unknown)
	}
	return d, nil
}

func (d *LinkDomains) has(name string) bool {
	for _, n := range d.Names {
		if n == name {
			return true
		}
	}
	return false
}

// host is the link domain a request's Host header names ("" for the
// default domain), or false for an unknown host under UnknownHost404. It
// allocates nothing: the name returned is one of d's.
func (d *LinkDomains) host(h []byte) (string, bool) {
	if len(d.Names) == 0 && !d.UnknownHost404 {
		return "", true
	}
	if i := bytes.LastIndexByte(h, ':'); i >= 0 && bytes.IndexByte(h[i:], ']') < 0 {
		h = h[:i] // a port (not the inside of an IPv6 literal)
	}
	h = bytes.TrimSuffix(h, []byte{'.'})
	for _, n := range d.Names {
		if bytes.EqualFold(h, []byte(n)) {
			return n, true
		}
	}
	return "", !d.UnknownHost404 || bytes.EqualFold(h, []byte(d.Default))
}

// Check makes in's domain (normalised, NormDomain) what a store keeps
// ("" for the default domain's name) and refuses one that is not among
// d's.
func (d *LinkDomains) Check(in *marquee.LinkInput) error {
	switch {
	case in.Domain == "" || in.Domain == d.Default:
		in.Domain = ""
	case !d.has(in.Domain):
		known := "none are (set -link-domains)"
		if len(d.Names) > 0 {
			known = strings.Join(d.Names, ", ")
		}
		return marquee.Invalid("invalid link", marquee.Problems{"domain": fmt.Sprintf("%q is not one of this server's link domains: %s", in.Domain, known)})
	}
	return nil
}

// Named is the domain a parameter that is given names (?domain=,
// -domain), as a store keeps it ("" for the default domain's name), or
// what is wrong with it: not a hostname (NormDomain; "" is not), or not
// one of d's (Check).
func (d *LinkDomains) Named(s string) (string, string) {
	in := marquee.LinkInput{}
	var msg string
	if in.Domain, msg = marquee.NormDomain(s); msg != "" {
		return "", msg
	}
	if err := d.Check(&in); err != nil {
		return "", marquee.AsError(err).Problems["domain"]
	}
	return in.Domain, ""
}

// Keys are the link cache's keys of codes on every domain (the
// changelog names a changed link by its code alone). nil, which says
// "every key" (a reload), stays nil.
func (d *LinkDomains) Keys(codes []string) []string {
	if len(d.Names) == 0 || codes == nil {
		return codes
	}
	keys := make([]string, 0, len(codes)*(1+len(d.Names)))
	for _, c := range codes {
		keys = append(keys, c)
		for _, n := range d.Names {
			keys = append(keys, marquee.LinkKey(n, c))
		}
	}
	return keys
}
