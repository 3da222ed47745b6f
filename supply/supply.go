// Package supply publishes what lets buyers verify a network's inventory
// and checks what its publishers publish (docs/api.md#sellers-and-adstxt):
// the network's identity (Network), its sellers.json (IAB Tech Lab
// sellers.json 1.0) with an entry for every site, and the ads.txt line a
// site's publisher adds to each of its domains (IAB Tech Lab ads.txt 1.1).
// It speaks no HTTP: package web serves its documents.
package supply

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strings"

	"marquee"

	"github.com/prebid/openrtb/v20/openrtb2"
)

// Network is who the network is to buyers: the canonical domain of its
// advertising system (the first field of its publishers' ads.txt lines
// and the asi of its schain nodes), its business name and contact, and
// its Trustworthy Accountability Group certification id when it has one.
// The zero Network has no identity: it publishes no sellers.json and
// gives no ads.txt line.
type Network struct {
	Domain  string // -seller-domain: ads.example.net
	Name    string // -seller-name
	Contact string // -seller-contact: an email
	CertID  string // -seller-cert-id: the TAG-ID, the line's fourth field
}

// Known reports whether the network has an identity (a domain).
func (n Network) Known() bool { return n.Domain != "" }

// Check normalises the network's domain and checks each field, naming
// the flag of the first that is wrong. A network without a domain may
// have nothing else.
func (n Network) Check() (Network, error) {
	if n.Domain == "" {
		if n.Name != "" || n.Contact != "" || n.CertID != "" {
			return n, fmt.Errorf("-seller-name, -seller-contact and -seller-cert-id need -seller-domain (the network's canonical domain, such as ads.example.net)")
		}
		return n, nil
	}
	d, msg := marquee.NormDomain(n.Domain)
	if msg != "" {
		return n, fmt.Errorf("-seller-domain: %s", msg)
	}
	n.Domain = d
	if n.Contact != "" {
		if a, err := mail.ParseAddress(n.Contact); err != nil || a.Address != n.Contact {
			return n, fmt.Errorf("-seller-contact %q: want an email address", n.Contact)
		}
	}
	if strings.ContainsAny(n.Name, "\r\n") || len(n.Name) > 255 {
		return n, fmt.Errorf("-seller-name: want one line of at most 255 bytes")
	}
	if strings.ContainsAny(n.CertID, ", \t\r\n#;=") || len(n.CertID) > 64 {
		return n, fmt.Errorf("-seller-cert-id %q: want the TAG-ID as TAG issued it (letters and digits)", n.CertID)
	}
	return n, nil
}

// AdsTxt is what a site's publisher adds to the ads.txt of each of its
// domains: a comment naming the network (its name, when it has one, and
// domain), then AdsTxtLine; "" when the network has no identity.
func (n Network) AdsTxt(s marquee.Site) string {
	if !n.Known() {
		return ""
	}
	who := n.Domain
	if n.Name != "" {
		who = n.Name + " (" + n.Domain + ")"
	}
	return "# " + who + "\n" + n.AdsTxtLine(s) + "\n"
}

// AdsTxtLine is the record a site's publisher adds to the ads.txt of
// each of its domains to authorise the network to sell it:
// "<domain>, <seller id>, DIRECT" and the certification id when the
// network has one. It is "" when the network has no identity.
func (n Network) AdsTxtLine(s marquee.Site) string {
	if !n.Known() {
		return ""
	}
	line := n.Domain + ", " + s.SellerID + ", DIRECT"
	if n.CertID != "" {
		line += ", " + n.CertID
	}
	return line
}

// Sellers is a sellers.json document (IAB Tech Lab sellers.json 1.0).
type Sellers struct {
	ContactEmail string   `json:"contact_email,omitempty"`
	Version      string   `json:"version"`
	Identifiers  []Ident  `json:"identifiers,omitempty"`
	Sellers      []Seller `json:"sellers"`
}

// Ident is an identifier of the network (sellers.json's identifiers):
// its TAG-ID when it has one.
type Ident struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Seller is one entry of sellers.json. A confidential seller's name and
// domain are left out, as the specification allows; is_confidential is
// written only when it is 1 (0 is its default).
type Seller struct {
	SellerID       string `json:"seller_id"`
	Name           string `json:"name,omitempty"`
	Domain         string `json:"domain,omitempty"`
	SellerType     string `json:"seller_type"`
	IsConfidential int    `json:"is_confidential,omitempty"`
}

// SellersJSON is the network's sellers.json: an entry for every site,
// by seller id. A site's name is its sellers.json name and its first
// domain its business domain (a site without domains has none).
func (n Network) SellersJSON(sites []marquee.Site) Sellers {
	doc := Sellers{ContactEmail: n.Contact, Version: "1.0", Sellers: make([]Seller, 0, len(sites))}
	if n.CertID != "" {
		doc.Identifiers = []Ident{{Name: "TAG-ID", Value: n.CertID}}
	}
	sites = slices.Clone(sites)
	slices.SortFunc(sites, func(a, b marquee.Site) int { // by number
		return cmp.Or(cmp.Compare(len(a.SellerID), len(b.SellerID)), strings.Compare(a.SellerID, b.SellerID))
	})
	for _, s := range sites {
		e := Seller{SellerID: s.SellerID, SellerType: string(s.SellerType)}
		if s.Confidential {
			e.IsConfidential = 1
		} else {
			e.Name = s.Name
			if len(s.Domains) > 0 {
				e.Domain = s.Domains[0]
			}
		}
		doc.Sellers = append(doc.Sellers, e)
	}
	return doc
}

// Marshal is the document's JSON.
func (s Sellers) Marshal() []byte {
	b, _ := json.Marshal(s) // strings and ints only: it cannot fail
	return b
}

// SChain is the SupplyChain object (OpenRTB 2.6 source.schain, IAB Tech
// Lab SupplyChain 1.0) of a bid request for a site's inventory sold by
// the network: complete, with the network's one node — its domain as asi,
// the site's seller id as sid, hp 1 (the network is paid for it), and rid
// the request's id when it has one ("" none: a page's own auction). It
// is nil when the network has no identity or the site no seller id.
func (n Network) SChain(sellerID, requestID string) *openrtb2.SupplyChain {
	if !n.Known() || sellerID == "" {
		return nil
	}
	hp := int8(1)
	return &openrtb2.SupplyChain{Ver: "1.0", Complete: 1,
		Nodes: []openrtb2.SupplyChainNode{{ASI: n.Domain, SID: sellerID, RID: requestID, HP: &hp}}}
}
