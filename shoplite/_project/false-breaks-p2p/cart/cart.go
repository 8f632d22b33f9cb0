// Package cart prices a shopping cart in cents: line subtotals, then at
// most one coupon.
package cart

import (
	"errors"
	"fmt"
)

// Item is one line of the cart.
type Item struct {
	SKU        string `json:"sku"`
	PriceCents int64  `json:"price_cents"`
	Quantity   int64  `json:"quantity"`
}

var (
	// ErrUnknownCoupon is returned for a coupon code the shop does not have.
	ErrUnknownCoupon = errors.New("unknown coupon")
	// ErrInvalidItem is returned for a negative price or a quantity below 1.
	ErrInvalidItem = errors.New("invalid item")
)

// Coupon is a discount: a percentage off, or a fixed amount off.
type Coupon struct {
	Code        string
	Percent     int64 // 0 to 100
	AmountCents int64
}

var coupons = map[string]Coupon{
	"SAVE0":    {Code: "SAVE0"}, // kept for campaign tracking: worth nothing
	"SAVE10":   {Code: "SAVE10", Percent: 10},
	"SAVE25":   {Code: "SAVE25", Percent: 25},
	"SAVE300":  {Code: "SAVE300", AmountCents: 300},
	"SAVE1000": {Code: "SAVE1000", AmountCents: 1000},
}

// Lookup returns the coupon with the given code.
func Lookup(code string) (Coupon, error) {
	c, ok := coupons[code]
	if !ok {
		return Coupon{}, fmt.Errorf("%w: %q", ErrUnknownCoupon, code)
	}
	return c, nil
}

// Apply returns cents after the coupon's discount.
func (c Coupon) Apply(cents int64) int64 {
	if c.Percent != 0 {
		return cents * (100 - c.Percent) / 100
	}
	return cents - c.AmountCents
}

// Total returns what the customer pays for items with the coupon (""
// for none), in cents.
func Total(items []Item, coupon string) (int64, error) {
	var subtotal int64
	for i, it := range items {
		if it.PriceCents < 0 || it.Quantity < 1 {
			return 0, fmt.Errorf("%w: line %d", ErrInvalidItem, i+1)
		}
		subtotal += it.PriceCents * it.Quantity
	}
	if coupon == "" {
		return subtotal, nil
	}
	c, err := Lookup(coupon)
	if err != nil {
		return 0, err
	}
	if c.Percent == 0 && c.AmountCents == 0 {
		return 0, fmt.Errorf("%w: %q takes nothing off", ErrUnknownCoupon, coupon)
	}
	return c.Apply(subtotal), nil
}
