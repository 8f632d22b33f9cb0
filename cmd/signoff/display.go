package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// display makes server text safe to put on a terminal: control characters,
// invisible formatting characters (such as bidirectional overrides) and
// invalid UTF-8 are shown as escapes, so that what the card holds cannot
// rewrite or hide what the approver reads. It counts what it escaped.
type display struct{ escaped int }

// line shows s on one line: newlines are escaped too.
func (d *display) line(s string) string { return d.show(s, false) }

// text shows s keeping its newlines and tabs.
func (d *display) text(s string) string { return d.show(s, true) }

func (d *display) show(s string, multiline bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
			d.escaped++
		case r == '\t' || (multiline && r == '\n'):
			b.WriteRune(r)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
			d.escaped++
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
			d.escaped++
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
