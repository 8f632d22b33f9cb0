package cart

import (
	"errors"
	"testing"
)

func TestEmptyCart(t *testing.T) {
	for _, coupon := range []string{"", "SAVE10"} {
		if got, err := Total(nil, coupon); err != nil || got != 0 {
			t.Errorf("Total(empty cart, %q) = %d, %v; want 0", coupon, got, err)
		}
	}
}

func TestSingleItemNoCoupon(t *testing.T) {
	got, err := Total([]Item{{SKU: "mug", PriceCents: 1250, Quantity: 2}}, "")
	if err != nil || got != 2500 {
		t.Errorf("Total(2 x 1250 cents) = %d, %v; want 2500", got, err)
	}
}

func TestZeroCoupon(t *testing.T) {
	items := []Item{{SKU: "lamp", PriceCents: 10000, Quantity: 1}}
	got, err := Total(items, "SAVE0")
	if err != nil || got != 10000 {
		t.Errorf("Total(10000 cents, SAVE0) = %d, %v; want 10000: a coupon worth nothing changes nothing", got, err)
	}
}

func TestFixedCoupon(t *testing.T) {
	items := []Item{{SKU: "book", PriceCents: 1000, Quantity: 1}}
	got, err := Total(items, "SAVE300")
	if err != nil || got != 700 {
		t.Errorf("Total(1000 cents, SAVE300) = %d, %v; want 700", got, err)
	}
}

func TestUnknownCoupon(t *testing.T) {
	_, err := Total([]Item{{SKU: "mug", PriceCents: 100, Quantity: 1}}, "FREE")
	if !errors.Is(err, ErrUnknownCoupon) {
		t.Errorf("Total(..., FREE) error = %v; want ErrUnknownCoupon", err)
	}
}

func TestInvalidItem(t *testing.T) {
	for _, it := range []Item{{SKU: "neg", PriceCents: -1, Quantity: 1}, {SKU: "none", PriceCents: 100, Quantity: 0}} {
		if _, err := Total([]Item{it}, ""); !errors.Is(err, ErrInvalidItem) {
			t.Errorf("Total(%+v) error = %v; want ErrInvalidItem", it, err)
		}
	}
}
