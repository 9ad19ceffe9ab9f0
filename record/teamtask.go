package record

import "time"

// TeamTask is one task of a team's shared task list (docs/agents.md,
// "Teams"): what TaskCreate made and TaskUpdate changed.
type TeamTask struct {
	ID          string `json:"id"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
	ActiveForm  string `json:"active_form,omitempty"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
	// Owner is the teammate that claimed it ("main" for the lead).
	Owner     string   `json:"owner,omitempty"`
	Blocks    []string `json:"blocks"`
	BlockedBy []string `json:"blocked_by"`
	// Waiting are the tasks of BlockedBy not completed yet: while there
	// are any, nobody may claim it.
	Waiting   []string  `json:"waiting"`
	CreatedBy string    `json:"created_by,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}
