package airlock

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Invisible payloads ("ASCII smuggling"). Unicode tag characters
// (U+E0020-U+E007E) mirror printable ASCII and render as nothing, yet a
// model reads them; variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF)
// can carry one byte each after any visible character. Normalize removes
// both, so the dossier shows nothing of them, but the text they spell is
// exactly what an attacker meant the model to read: it is decoded here and
// scanned on its own.

// The tag characters and the supplementary variation selectors all start
// with these two bytes in UTF-8: text without them has no payload that can
// spell printable ASCII (the sixteen basic selectors only reach bytes
// 0-15).
const invisiblePrefix = "\xf3\xa0"

const (
	tagBase      = 0xE0000
	tagLanguage  = 0xE0001 // deprecated language tag: opens a tag run
	tagCancel    = 0xE007F // ends a tag run, and a subdivision flag
	blackFlag    = 0x1F3F4 // the base of subdivision flags
	minVSPayload = 8       // variation selectors in a row worth decoding
)

// scanInvisible decodes the text s spells in tag characters and variation
// selectors and returns famInvisible with the families that text fires, or
// 0 when s hides nothing readable.
func (d *detector) scanInvisible(s string) famSet {
	if !strings.Contains(s, invisiblePrefix) {
		return 0
	}
	payload := invisiblePayload(s)
	if payload == "" {
		return 0
	}
	return famInvisible | d.scan(foldedForScan(payload), 1) | d.scanEncoded(payload)
}

// invisiblePayload returns the readable text hidden in s, the runs joined
// by line breaks, or "". A run of tag characters right after U+1F3F4 that
// spells a short lowercase region code ("gbeng") is a subdivision flag and
// is skipped; so is a lone variation selector (emoji and ideographic
// variants use one at a time).
func invisiblePayload(s string) string {
	var out []byte
	budget := maxDecodeTotal
	for i := strings.Index(s, invisiblePrefix); i >= 0 && budget > 0; {
		// Back up to the start of the rune (the prefix is its first bytes)
		// and read the run of invisible characters from there.
		run, end, kind := readInvisibleRun(s, i)
		switch kind {
		case runTags:
			if !isFlagTags(s, i, run) && readableHidden(run) {
				out = appendPayload(out, run)
			}
		case runVS:
			if b := []byte(run); len(b) >= minVSPayload && readable(b) {
				out = appendPayload(out, run)
			}
		}
		budget -= end - i
		next := strings.Index(s[max(end, i+1):], invisiblePrefix)
		if next < 0 {
			break
		}
		i = max(end, i+1) + next
	}
	if len(out) > maxDecodeTotal {
		out = out[:maxDecodeTotal]
	}
	return string(out)
}

func appendPayload(out []byte, run string) []byte {
	if len(out) > 0 {
		out = append(out, '\n')
	}
	return append(out, run...)
}

const (
	runNone = iota
	runTags
	runVS
)

// readInvisibleRun decodes the run of tag characters, or of variation
// selectors, that starts at s[i], and returns its text, where it ends and
// its kind. Tag runs keep the printable ASCII they mirror and drop the
// language and cancel tags; selector runs give one byte per selector.
func readInvisibleRun(s string, i int) (string, int, int) {
	r, _ := utf8.DecodeRuneInString(s[i:])
	switch {
	case r >= tagBase && r <= tagCancel:
		var b []byte
		j := i
		for j < len(s) && len(b) < maxBlobBytes {
			r, size := utf8.DecodeRuneInString(s[j:])
			if r < tagBase || r > tagCancel {
				break
			}
			if r >= tagBase+0x20 && r < tagCancel {
				b = append(b, byte(r-tagBase))
			}
			j += size
		}
		return string(b), j, runTags
	case r >= 0xE0100 && r <= 0xE01EF:
		var b []byte
		j := i
		for j < len(s) && len(b) < maxBlobBytes {
			r, size := utf8.DecodeRuneInString(s[j:])
			switch {
			case r >= 0xFE00 && r <= 0xFE0F:
				b = append(b, byte(r-0xFE00))
			case r >= 0xE0100 && r <= 0xE01EF:
				b = append(b, byte(r-0xE0100+16))
			default:
				return string(b), j, runVS
			}
			j += size
		}
		return string(b), j, runVS
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return "", i + max(size, 1), runNone
}

// isFlagTags reports whether the tag run at s[i:] is the tag sequence of a
// subdivision flag: right after U+1F3F4, a short lowercase code.
func isFlagTags(s string, i int, run string) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	if r != blackFlag || len(run) == 0 || len(run) > 7 {
		return false
	}
	for k := 0; k < len(run); k++ {
		if c := run[k]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// readableHidden reports whether a decoded tag run says something: a few
// characters, mostly letters. Any such run outside a flag is deliberate,
// since tag characters have no other use left in Unicode.
func readableHidden(run string) bool {
	t := strings.TrimSpace(run)
	if len(t) < 4 {
		return false
	}
	letters := 0
	for _, r := range t {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters*2 >= len(t)
}
