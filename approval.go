package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Approval: the states of advertisers, campaigns and ads, the actions
// that move them, and the review an approval or a rejection leaves
// (docs/api.md#approval).

// The states of advertisers and campaigns. An archived one is kept (its
// reports stay) and serves nothing; its name is free for a new one. A
// campaign is a draft when created, pending once submitted for approval,
// active once approved, and only an active one serves
// (docs/api.md#approval).
const (
	StateDraft    = "draft"   // campaigns only
	StatePending  = "pending" // campaigns only: submitted, waiting for approval
	StateActive   = "active"  // approved (a campaign), serving in its flight
	StatePaused   = "paused"  // campaigns only
	StateArchived = "archived"
)

// CampaignStates lists the states of a campaign, in the order of its life.
var CampaignStates = []string{StateDraft, StatePending, StateActive, StatePaused, StateArchived}

// The actions that move a campaign from state to state.
const (
	ActionSubmit  = "submit"
	ActionApprove = "approve"
	ActionReject  = "reject"
	ActionPause   = "pause"
	ActionResume  = "resume"
	ActionArchive = "archive"
)

// Move is an action on a campaign's state: to To, from one of From.
type Move struct {
	Action string
	To     string
	From   []string
}

// Moves are the actions on a campaign's state. Approval may skip submission
// (whoever may approve may approve a draft); a rejection sends a pending
// campaign back to draft with its reason; pause and resume move only an
// approved campaign; anything but an archived campaign may be archived.
var Moves = map[string]Move{
	ActionSubmit:  {ActionSubmit, StatePending, []string{StateDraft}},
	ActionApprove: {ActionApprove, StateActive, []string{StateDraft, StatePending}},
	ActionReject:  {ActionReject, StateDraft, []string{StatePending}},
	ActionPause:   {ActionPause, StatePaused, []string{StateActive}},
	ActionResume:  {ActionResume, StateActive, []string{StatePaused}},
	ActionArchive: {ActionArchive, StateArchived, []string{StateDraft, StatePending, StateActive, StatePaused}},
}

// Check says whether campaign id, in state from, may take m: nil when it
// may or is in m.To already (a repeated action changes nothing; but a
// draft was never rejected for being one), else a KindConflict error
// naming both states.
func (m Move) Check(id int64, from string) error { return m.CheckOf("campaign", id, from) }

// CheckOf is Check of what ("campaign", "ad").
func (m Move) CheckOf(what string, id int64, from string) error {
	if slices.Contains(m.From, from) || from == m.To && m.Action != ActionReject {
		return nil
	}
	return Errorf(KindConflict, "%s %d is %s: %s moves %s that is %s", what, id, from, m.Action, article(what), strings.Join(m.From, " or "))
}

// MaxReasonLen is the longest reason of a rejection, in characters.
const MaxReasonLen = 1000

// Review is the last step of a campaign's approval: who submitted,
// approved or rejected it, when, and a rejection's reason.
type Review struct {
	Action string    `json:"action"` // submit, approve or reject
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by"` // the actor, as the audit log names it
	At     time.Time `json:"at"`
	// Approved is an ad's version as last approved (nil: never, or a
	// campaign's review): what its reviewers compare a change with.
	Approved *ApprovedAd `json:"approved,omitempty"`
}

// ApprovedAd is what an ad showed when it was last approved: its title,
// landing page and creative.
type ApprovedAd struct {
	Title    string    `json:"title"`
	URL      string    `json:"url,omitempty"`
	Creative *Creative `json:"creative,omitempty"`
}

// MarshalJSON writes At in TimeLayout.
func (r Review) MarshalJSON() ([]byte, error) {
	type plain Review
	return json.Marshal(struct {
		plain
		At string `json:"at"`
	}{plain(r), FormatTime(r.At)})
}

// ParseReason reads the body of a rejection, {"reason": "…"}: a reason is
// required (1 to MaxReasonLen characters).
func ParseReason(body []byte) (string, error) {
	p := Problems{}
	fields, ok := object(body, p, "reason")
	if !ok {
		return "", Invalid("invalid rejection", p)
	}
	var reason string
	raw, ok := present(fields, "reason")
	switch {
	case !ok:
		p["reason"] = "is required: say what to change"
	case json.Unmarshal(raw, &reason) != nil:
		p["reason"] = "must be a string"
	case strings.TrimSpace(reason) == "" || utf8.RuneCountInString(reason) > MaxReasonLen || strings.ContainsFunc(reason, isControl):
		p["reason"] = fmt.Sprintf("must be 1 to %d characters without control characters", MaxReasonLen)
	}
	return strings.TrimSpace(reason), Invalid("invalid rejection", p)
}

// AdMoves are the actions on the state of a campaign's ad
// (docs/api.md#approval): approval, and pausing one ad of a campaign.
var AdMoves = map[string]Move{
	ActionApprove: {ActionApprove, StateActive, []string{StatePending, StateDraft}},
	ActionReject:  {ActionReject, StateDraft, []string{StatePending}},
	ActionPause:   {ActionPause, StatePaused, []string{StateActive}},
	ActionResume:  {ActionResume, StateActive, []string{StatePaused}},
}
