package marquee

// Outcome is what became of one slot of a decision: filled by a
// campaign's ad, filled by the placement's default (house) ad, or left
// empty for a reason. Every decision counts one outcome per slot (see
// docs/api.md#requests-and-fill); Explain gives the same reasons ad by ad.
type Outcome uint8

// The outcomes. The unfilled reasons are in the order a candidate meets
// the checks: a slot left empty counts the furthest any candidate got (a
// slot where one campaign was not targeted and another was capped counts
// Capped: capping is what kept it empty).
const (
	Filled Outcome = iota
	House          // the placement's default ad filled it
	// The reasons a slot stayed empty.
	NoCandidate // no campaign has an ad for the placement at all
	WrongSize   // campaigns have ads, none of a size and type the placement takes
	NotRunning  // candidates, none active now (paused, flight not on)
	Untargeted  // candidates, none targeted this request (targeting, keywords, the ad's own rules)
	InRequest   // candidates, all already shown in another slot of the request
	CappedOut   // candidates, every one at the user's frequency cap (or caps unavailable)
	GoalReached // candidates, every one's goal (or budget) met
	PacedOut    // candidates, every one ahead of its pacing (or its budget unknown)
	NoConsent   // untargeted, and the visitor's consent was refused: a consenting visitor might have been filled
	NumOutcomes = iota
)

// OutcomeNames are the outcomes' names in reports and the API, by
// Outcome.
var OutcomeNames = [NumOutcomes]string{"filled", "house", "noCampaign", "wrongSize", "notRunning", "untargeted",
	"inRequest", "capped", "goalMet", "paced", "consent"}

// String is the outcome's name.
func (o Outcome) String() string {
	if int(o) < len(OutcomeNames) {
		return OutcomeNames[o]
	}
	return "unknown"
}

// IsFilled says the slot was filled (by a campaign or the house).
func (o Outcome) IsFilled() bool { return o == Filled || o == House }
