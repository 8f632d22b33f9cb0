package airlock

import "encoding/binary"

// The byte scans of Fold test eight bytes at a time, with a few integer
// operations on a 64-bit word per byte class ("SIMD within a register"):
// text with nothing to look at is crossed eight bytes per step, and only
// the candidates are read one byte at a time.

const (
	swarOnes  = 0x0101010101010101
	swarLow7  = 0x7F7F7F7F7F7F7F7F
	swarHighs = 0x8080808080808080
)

// load64 returns s[i:i+8] as a little-endian word: byte i is the lowest.
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// swarRange sets the high bit of each byte of x that lies in [lo, hi],
// for hi < 0x80, and clears every other bit.
func swarRange(x uint64, lo, hi byte) uint64 {
	y := x &^ swarHighs // below 0x80 each, so the sums below never carry
	ge := y + (0x80-uint64(lo))*swarOnes
	gt := y + (0x7F-uint64(hi))*swarOnes
	return ge &^ gt &^ x & swarHighs
}

// swarEq sets the high bit of each byte of x equal to c.
func swarEq(x uint64, c byte) uint64 {
	t := x ^ uint64(c)*swarOnes
	return ^((t&swarLow7 + swarLow7) | t) & swarHighs
}

// swarWord sets the high bit of each byte of x that isWordByte accepts:
// a-z, 0-9, '@' and '$'.
func swarWord(x uint64) uint64 {
	return swarRange(x, 'a', 'z') | swarRange(x, '0', '9') | swarEq(x, '@') | swarEq(x, '$')
}

// swarDigitAtDollar sets the high bit of each byte of x that is a digit,
// '@' or '$': the bytes leetspeak puts for a letter (0 1 3 4 5 7 @ $) and
// a few more.
func swarDigitAtDollar(x uint64) uint64 {
	return swarRange(x, '0', '9') | swarEq(x, '@') | swarEq(x, '$')
}

// lowerASCII lower-cases the ASCII letters of b in place.
func lowerASCII(b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// 0x80 >> 2 is 0x20, the bit that makes a capital small.
		binary.LittleEndian.PutUint64(b[i:], x|swarRange(x, 'A', 'Z')>>2)
	}
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}
