package signoff

// Decisions a signed approval may carry (approval.Approve and
// approval.Reject name the same values). The store counts approvals by
// their decision, so the words live with the domain.
const (
	ApprovalApprove = "approve"
	ApprovalReject  = "reject"
)
