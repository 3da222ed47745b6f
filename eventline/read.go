package eventline

import (
	"bytes"
	"time"
)

// Fields are the values of an event line a report reads, by field index
// (ReceivedAt, …), as they stand in the line (JSON strings without their
// quotes, escapes left as they are: every value a report keeps is one
// that needs none, and the others are only compared or hashed).
type Fields [NumFields][]byte

// The fields a report reads.
const (
	ReceivedAt = iota
	IP
	UA
	Type
	Ad
	Link
	UID
	Country
	Platform
	Campaign
	Placement
	ID           // the event's id: the server's, unique, the same in every copy of the line
	Domain       // the link's domain (a redirect's click event on a link domain)
	Referrer     // where the visitor came from (a redirect's Referer, or the client's)
	Dest         // the A/B destination a redirect picked (its index)
	Measured     // "1": the tag measured the impression's viewability
	Geo          // the country of the address before it was truncated (the server's)
	Verified     // "1": a valid decision token vouches for the event (the server's; see reportrow.Counts)
	Redirected   // "1": a redirect's click (the server's: the request it answered)
	KV           // the decision's key-values reports count: "section=sports&pos=atf", query-escaped
	Cost         // what a verified event bills, in nano-units of the currency (the server's: docs/api.md#money)
	Attribution  // a conversion's: "click" or "view", what earned it (the server's)
	ConvValue    // an attributed conversion's value, in micro-units (the server's)
	Bidder       // the header-bidding bidder whose bid filled the slot (the server's)
	Unbilled     // why an event its price bills was billed nothing: "overBudget" or "invalid" (the server's)
	UnbilledCost // what that event would have cost, in nano-units (the server's)
	IVT          // why the event is invalid traffic: an ivt reason's name, "" a person's (the server's)
	ErrorCode    // a player's error event's VAST error code ([ERRORCODE]: digits), "" none (the server's)
	NumFields
)

// fieldKeys are the keys of the fields: the server's, and the client's a
// report reads (a redirect's click event names its link "code" and its ad
// "adId"). A loop over them, lengths first, beats a map for keys this
// short.
var fieldKeys = [...]struct {
	key string
	f   int
}{
	{"receivedAt", ReceivedAt}, {"ip", IP}, {"ua", UA}, {"type", Type}, {"ad", Ad}, {"adId", Ad},
	{"link", Link}, {"code", Link}, {"uid", UID}, {"country", Country}, {"platform", Platform},
	{"campaign", Campaign}, {"campaignId", Campaign}, {"placement", Placement}, {"id", ID},
	{"domain", Domain}, {"referrer", Referrer}, {"dest", Dest}, {"measured", Measured}, {"geo", Geo},
	{"verified", Verified}, {"redirected", Redirected}, {"kv", KV},
	{"cost", Cost}, {"attribution", Attribution}, {"conversionValue", ConvValue}, {"bidder", Bidder},
	{"unbilled", Unbilled}, {"unbilledCost", UnbilledCost}, {"ivt", IVT}, {"errorCode", ErrorCode},
}

// Scan reads the fields of one event line (a JSON object as AppendHead
// and the Append functions write it) into f and reports whether the line is well formed. It does
// not allocate. A field that is not a string is kept only for ad and
// campaign (a number); nested values are skipped.
func Scan(line []byte, f *Fields) bool {
	*f = Fields{}
	i := serverFields(line, f)
	switch {
	case i == 0:
		if i = skipSpace(line, 0); i >= len(line) || line[i] != '{' {
			return false
		}
		i++
	case i < len(line) && line[i] == ',':
		i++
	case i < len(line) && line[i] == '}':
		return true
	default:
		return false
	}
	for {
		i = skipSpace(line, i)
		if i < len(line) && line[i] == '}' {
			return true
		}
		if i >= len(line) || line[i] != '"' {
			return false
		}
		key, j, ok := str(line, i)
		if !ok {
			return false
		}
		i = skipSpace(line, j)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		if i >= len(line) {
			return false
		}
		var val []byte
		if line[i] == '"' {
			if val, i, ok = str(line, i); !ok {
				return false
			}
		} else {
			start := i
			if i, ok = skipValue(line, i); !ok {
				return false
			}
			val = line[start:i]
			if val[0] == '{' || val[0] == '[' || val[0] == 'n' || val[0] == 't' || val[0] == 'f' {
				val = nil // only numbers are kept
			}
		}
		for _, k := range fieldKeys {
			if len(k.key) == len(key) && k.key == string(key) {
				f[k.f] = val
				break
			}
		}
		i = skipSpace(line, i)
		if i < len(line) && line[i] == ',' {
			i++
			continue
		}
		if i < len(line) && line[i] == '}' {
			return true
		}
		return false
	}
}

// serverFields reads the fields AppendHead puts first in every line,
// in its order — {"receivedAt":"…","id":"…","ip":"…","ua":"…", — by
// position, and returns the index after them (at the comma before the
// client's fields), or 0 when the line does not open that way: scan then
// reads it key by key.
func serverFields(line []byte, f *Fields) int {
	at := Stamp(line)
	if at == nil {
		return 0
	}
	f[ReceivedAt] = at
	i := len(openStamp) + len(at)
	for _, next := range [...]struct {
		sep string
		f   int
	}{{`","id":"`, ID}, {`","ip":"`, IP}} {
		if !bytes.HasPrefix(line[i:], []byte(next.sep)) {
			return 0
		}
		i += len(next.sep)
		end := bytes.IndexByte(line[i:], '"') // ids and addresses hold no quote or backslash
		if end < 0 {
			return 0
		}
		f[next.f] = line[i : i+end]
		i += end
	}
	if sep := `","geo":"`; bytes.HasPrefix(line[i:], []byte(sep)) && len(line) >= i+len(sep)+2 {
		f[Geo] = line[i+len(sep) : i+len(sep)+2]
		i += len(sep) + 2
	}
	if !bytes.HasPrefix(line[i:], []byte(`","ua":`)) {
		return 0
	}
	ua, j, ok := str(line, i+len(`","ua":`))
	if !ok {
		return 0
	}
	f[UA] = ua
	return j
}

const openStamp = `{"receivedAt":"`

// Stamp returns the receivedAt that opens a line AppendHead wrote —
// "2006-01-02T15:04:05.000000000Z", fixed-width UTC, so that stamps sort
// as the times do — or nil for a line that does not open with one.
func Stamp(line []byte) []byte {
	const stamp = len("2006-01-02T15:04:05.000000000Z")
	if len(line) < len(openStamp)+stamp || string(line[:len(openStamp)]) != openStamp {
		return nil
	}
	return line[len(openStamp) : len(openStamp)+stamp]
}

// str reads the JSON string starting at line[i] (a quote) and returns its
// raw contents and the index after its closing quote: the first quote
// after it that an even number of backslashes precedes.
func str(line []byte, i int) ([]byte, int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(line[j:], '"')
		if k < 0 {
			return nil, 0, false
		}
		end := j + k
		escapes := 0
		for b := end - 1; b > i && line[b] == '\\'; b-- {
			escapes++
		}
		if escapes%2 == 0 {
			return line[i+1 : end], end + 1, true
		}
		j = end + 1
	}
}

// skipValue skips a JSON value that is not a string: a number, a literal,
// or a nested object or array (whose strings may hold any brackets).
func skipValue(line []byte, i int) (int, bool) {
	depth := 0
	for i < len(line) {
		switch c := line[i]; c {
		case '"':
			_, j, ok := str(line, i)
			if !ok {
				return 0, false
			}
			i = j
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true
			}
			depth--
		case ',':
			if depth == 0 {
				return i, true
			}
		}
		i++
	}
	return i, depth == 0
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// Hour parses an RFC 3339 receivedAt and returns the unix second of the
// start of its UTC hour.
func Hour(receivedAt []byte) (int64, bool) {
	// AppendHead writes "2006-01-02T15:04:05.000000000Z": read the hour
	// straight from its digits; anything else goes through time.Parse.
	if b := receivedAt; len(b) == 30 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[29] == 'Z' {
		y, ok1 := digits(b[0:4])
		mo, ok2 := digits(b[5:7])
		d, ok3 := digits(b[8:10])
		h, ok4 := digits(b[11:13])
		if ok1 && ok2 && ok3 && ok4 {
			return time.Date(y, time.Month(mo), d, h, 0, 0, 0, time.UTC).Unix(), true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(receivedAt))
	if err != nil {
		return 0, false
	}
	return t.Unix() / 3600 * 3600, true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
