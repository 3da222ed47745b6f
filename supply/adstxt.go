package supply

import (
	"bytes"
	"strconv"
	"strings"
)

// AdsTxt is an ads.txt file as IAB Tech Lab's ads.txt 1.1 reads it: its
// data records, its variables, and the lines it could not read (each
// skipped and named, as the specification asks: a bad line never spoils
// the rest).
type AdsTxt struct {
	Records   []AdsRecord
	Variables []AdsVariable
	Problems  []AdsProblem
}

// AdsRecord is one data record: the advertising system's domain (lower
// case), the seller's account id there (as written), the relationship
// (DIRECT or RESELLER, upper case) and the certification authority id
// when there is one. Line is its line number, from 1.
type AdsRecord struct {
	Domain, AccountID, Relationship, CertID string
	Line                                    int
}

// AdsVariable is a variable line (NAME=value): its name upper case
// (CONTACT, SUBDOMAIN, INVENTORYPARTNERDOMAIN, OWNERDOMAIN, MANAGERDOMAIN,
// or one a later version adds), its value trimmed.
type AdsVariable struct {
	Name, Value string
	Line        int
}

// AdsProblem is a line skipped, and why.
type AdsProblem struct {
	Line   int
	Text   string // the line as written (at most 200 bytes)
	Reason string
}

// ParseAdsTxt reads an ads.txt file. Lines end at LF, CR or CRLF; a "#"
// starts a comment to the end of its line; blank lines and the spaces
// around fields are ignored; a line NAME=value is a variable (its name
// letters only, any case); any other line is a record of three or four
// comma-separated fields — the domain (any case), the account id, DIRECT
// or RESELLER (any case), and the optional certification id — after
// which a ";" starts extension data, which is ignored.
func ParseAdsTxt(file []byte) AdsTxt {
	var f AdsTxt
	file = bytes.TrimPrefix(file, []byte("\xef\xbb\xbf")) // a byte order mark
	text := strings.ReplaceAll(strings.ReplaceAll(string(file), "\r\n", "\n"), "\r", "\n")
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		line, _, _ := strings.Cut(raw, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		problem := func(reason string) {
			t := strings.TrimSpace(raw)
			if len(t) > 200 {
				t = t[:200]
			}
			f.Problems = append(f.Problems, AdsProblem{Line: n, Text: t, Reason: reason})
		}
		if name, value, ok := strings.Cut(line, "="); ok && isVariableName(strings.TrimSpace(name)) {
			f.Variables = append(f.Variables, AdsVariable{Name: strings.ToUpper(strings.TrimSpace(name)), Value: strings.TrimSpace(value), Line: n})
			continue
		}
		data, _, _ := strings.Cut(line, ";") // extension fields follow a semicolon
		fields := strings.Split(data, ",")
		for j := range fields {
			fields[j] = strings.TrimSpace(fields[j])
		}
		if len(fields) < 3 || len(fields) > 4 {
			problem("want 3 or 4 comma-separated fields (domain, account id, DIRECT or RESELLER, certification id), found " + strconv.Itoa(len(fields)))
			continue
		}
		r := AdsRecord{Domain: strings.ToLower(fields[0]), AccountID: fields[1], Relationship: strings.ToUpper(fields[2]), Line: n}
		if len(fields) == 4 {
			r.CertID = fields[3]
		}
		switch {
		case r.Domain == "" || strings.ContainsAny(r.Domain, " \t/:"):
			problem("the first field is not a domain")
		case r.AccountID == "":
			problem("the account id (second field) is empty")
		case r.Relationship != "DIRECT" && r.Relationship != "RESELLER":
			problem("the third field must be DIRECT or RESELLER")
		default:
			f.Records = append(f.Records, r)
		}
	}
	return f
}

// isVariableName reports whether s can name an ads.txt variable: ASCII
// letters only.
func isVariableName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// Subdomains are the file's SUBDOMAIN variables, lower case: the
// subdomains whose own ads.txt a crawler reads (only those a root
// domain's file names).
func (f AdsTxt) Subdomains() []string {
	var out []string
	for _, v := range f.Variables {
		if v.Name == "SUBDOMAIN" && v.Value != "" {
			out = append(out, strings.ToLower(strings.TrimSuffix(v.Value, ".")))
		}
	}
	return out
}

// Find returns the first record that authorises seller id sellerID of
// the advertising system at domain (the domain compared in any case, the
// id exactly), and whether there is one.
func (f AdsTxt) Find(domain, sellerID string) (AdsRecord, bool) {
	for _, r := range f.Records {
		if r.Domain == strings.ToLower(domain) && r.AccountID == sellerID {
			return r, true
		}
	}
	return AdsRecord{}, false
}
