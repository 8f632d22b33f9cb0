package cart

import "testing"

// TestCouponNeverNegative reproduces the reported bug: a coupon worth more
// than the cart (SAVE300 on a 200-cent cart) must leave 0, not a negative
// total.
func TestCouponNeverNegative(t *testing.T) {
	items := []Item{{SKU: "sticker", PriceCents: 200, Quantity: 1}}
	got, err := Total(items, "SAVE300")
	if err != nil {
		t.Fatalf("Total(200 cents, SAVE300): %v", err)
	}
	if got != 0 {
		t.Errorf("Total(200 cents, SAVE300) = %d; want 0: a coupon never makes the total negative", got)
	}
}
