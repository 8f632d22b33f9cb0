package change

import (
	"testing"

	"github.com/signoff-dev/signoff"
)

// The store compares an approval made with no policy set against
// signoff.EmptyChangePolicyDigest (it does not import this package): it
// must stay the digest of the policy an empty document parses to.
func TestEmptyPolicyDigest(t *testing.T) {
	t.Parallel()
	p, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Digest(); got != signoff.EmptyChangePolicyDigest {
		t.Fatalf("Parse(nil).Digest() = %s, signoff.EmptyChangePolicyDigest = %s", got, signoff.EmptyChangePolicyDigest)
	}
	if d, err := PolicyDigest(nil); err != nil || d != signoff.EmptyChangePolicyDigest {
		t.Fatalf("PolicyDigest(nil) = %s, %v", d, err)
	}
}
