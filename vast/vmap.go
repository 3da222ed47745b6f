package vast

import (
	"encoding/xml"
	"fmt"
	"time"
)

// VMAP 1.0 (IAB's Video Multiple Ad Playlist): the ad breaks of a content
// video, each with where it falls and the VAST tag that fills it. Written
// with encoding/xml; the tests read it with types of their own.

// A Break is one ad break of a VMAP document: its id, where it falls
// (Offset: "start", "end", "HH:MM:SS.mmm" or "N%") and the VAST tag
// that fills it.
type Break struct {
	ID, Offset, TagURL string
}

// VMAPHeader starts a VMAP document.
const VMAPHeader = xml.Header

// AppendVMAP appends the VMAP document of breaks to dst. Each break's
// AdSource allows several ads (a pod) and follows redirects (wrappers);
// its AdTagURI's templateType is "vast3", the newest VMAP 1.0.1 names (a
// VAST 4 document keeps the elements VAST 3 players read).
func AppendVMAP(dst []byte, breaks []Break) ([]byte, error) {
	doc := vmap{NS: "http://www.iab.net/videosuite/vmap", Version: "1.0"}
	for _, b := range breaks {
		doc.Breaks = append(doc.Breaks, adBreak{TimeOffset: b.Offset, BreakType: "linear", BreakID: b.ID,
			Source: adSource{ID: b.ID + "-ads", AllowMultipleAds: true, FollowRedirects: true, TagURI: adTagURI{TemplateType: "vast3", URL: b.TagURL}}})
	}
	body, err := xml.Marshal(doc)
	if err != nil {
		return dst, fmt.Errorf("vmap: %w", err)
	}
	return append(append(dst, VMAPHeader...), body...), nil
}

// VMAPTime is d as VMAP writes a time offset: HH:MM:SS.mmm.
func VMAPTime(d time.Duration) string { return clock(d) }

type (
	vmap struct {
		XMLName xml.Name  `xml:"vmap:VMAP"`
		NS      string    `xml:"xmlns:vmap,attr"`
		Version string    `xml:"version,attr"`
		Breaks  []adBreak `xml:"vmap:AdBreak"`
	}
	adBreak struct {
		TimeOffset string   `xml:"timeOffset,attr"`
		BreakType  string   `xml:"breakType,attr"`
		BreakID    string   `xml:"breakId,attr"`
		Source     adSource `xml:"vmap:AdSource"`
	}
	adSource struct {
		ID               string   `xml:"id,attr"`
		AllowMultipleAds bool     `xml:"allowMultipleAds,attr"`
		FollowRedirects  bool     `xml:"followRedirects,attr"`
		TagURI           adTagURI `xml:"vmap:AdTagURI"`
	}
	adTagURI struct {
		TemplateType string `xml:"templateType,attr"`
		URL          string `xml:",cdata"`
	}
)
