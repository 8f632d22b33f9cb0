package cart

import "testing"

// TestCouponAppliesOnce reproduces the reported bug: a 10% coupon on a
// 10000-cent cart must leave 9000 cents.
func TestCouponAppliesOnce(t *testing.T) {
	items := []Item{{SKU: "lamp", PriceCents: 10000, Quantity: 1}}
	got, err := Total(items, "SAVE10")
	if err != nil {
		t.Fatalf("Total(10000 cents, SAVE10): %v", err)
	}
	if got != 9000 {
		t.Errorf("Total(10000 cents, SAVE10) = %d; want 9000: a 10%% coupon must apply once", got)
	}
}
