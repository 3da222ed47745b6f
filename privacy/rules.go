package privacy

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Marquee is the component name of Marquee's own activities in privacy
// rules (a demand partner's is its name).
const Marquee = "marquee"

// Rules are an operator's activity controls (-privacy-rules FILE,
// docs/privacy.md#rules): each may deny an activity for some components
// under some conditions, or allow it there (which only stops the rules
// after it from denying it). They never allow what a request's signals
// deny: a rule cannot bypass consent. Not changed once read: safe for
// concurrent use.
type Rules struct {
	list []rule
}

type rule struct {
	activity   Activity
	allow      bool
	components []string // none: every component
	sections   uint64   // GPP sections one of which must apply (bits by id; 0: any)
	countries  []string // ISO 3166-1 alpha-2 (none: any)
	sites      []string // site names (none: any)
}

// RulesFile is the JSON of a rules file.
type RulesFile struct {
	Rules []struct {
		Activity   string   `json:"activity"`
		Allow      bool     `json:"allow"`
		Components []string `json:"components"`
		When       struct {
			GPPSID  []int    `json:"gppSid"`
			Country []string `json:"country"`
			Site    []string `json:"site"`
		} `json:"when"`
	} `json:"rules"`
}

// MaxRules bounds a rules file.
const MaxRules = 1000

// ReadRules reads a rules file: {"rules": [{"activity", "allow",
// "components"?, "when"?: {"gppSid"?, "country"?, "site"?}}]}; every
// problem names its rule and field.
func ReadRules(name string) (*Rules, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	r, err := ParseRules(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// ParseRules reads the JSON of a rules file (ReadRules).
func ParseRules(b []byte) (*Rules, error) {
	var f RulesFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("privacy rules: %w", err)
	}
	if len(f.Rules) > MaxRules {
		return nil, fmt.Errorf("privacy rules: %d rules; at most %d", len(f.Rules), MaxRules)
	}
	r := &Rules{}
	for i, in := range f.Rules {
		a := slices.Index(ActivityNames[:], in.Activity)
		if a < 0 {
			return nil, fmt.Errorf("privacy rules: rules[%d].activity %q: want one of %s", i, in.Activity, strings.Join(ActivityNames[:], ", "))
		}
		ru := rule{activity: Activity(a), allow: in.Allow, components: in.Components, sites: in.When.Site}
		for _, id := range in.When.GPPSID {
			if id < 1 || id > 63 {
				return nil, fmt.Errorf("privacy rules: rules[%d].when.gppSid: %d is not a GPP section id (1 to 63)", i, id)
			}
			ru.sections |= 1 << id
		}
		for _, c := range in.When.Country {
			if len(c) != 2 {
				return nil, fmt.Errorf("privacy rules: rules[%d].when.country: %q is not an ISO 3166-1 alpha-2 code", i, c)
			}
			ru.countries = append(ru.countries, strings.ToUpper(c))
		}
		r.list = append(r.list, ru)
	}
	return r, nil
}

// Context is where an activity would happen: for which component (Marquee,
// or a demand partner by name), the viewer's country, the site, and the
// GPP sections that apply (Verdict.Sections).
type Context struct {
	Component string
	Country   string
	Site      string
	Sections  uint64
}

// Denies reports whether the rules deny a in c: the first rule of a that
// names c's component (or every one) and whose conditions all hold
// decides; none: not denied.
func (r *Rules) Denies(a Activity, c Context) bool {
	if r == nil {
		return false
	}
	for i := range r.list {
		ru := &r.list[i]
		if ru.activity != a || len(ru.components) > 0 && !slices.Contains(ru.components, c.Component) ||
			ru.sections != 0 && ru.sections&c.Sections == 0 ||
			len(ru.countries) > 0 && !slices.Contains(ru.countries, c.Country) ||
			len(ru.sites) > 0 && !slices.Contains(ru.sites, c.Site) {
			continue
		}
		return !ru.allow
	}
	return false
}

// Apply adds to v what the rules deny of c's component: each activity a
// rule denies; a user key denied (Limit Ruled) denies everything of the
// user.
func (r *Rules) Apply(v *Verdict, c Context) {
	if r == nil {
		return
	}
	for a := range NumActivities {
		if !v.Denied.Has(a) && r.Denies(a, c) {
			v.Denied = v.Denied.with(a)
		}
	}
	if v.Limit == None && v.Denied.Has(UserKey) {
		v.Limit = Ruled
		v.Denied = v.Denied.with(userActivities...)
	}
}
