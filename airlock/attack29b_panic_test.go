package airlock

import "testing"

// Issue 29 attack (second round): a prose password keyword right after an
// '&' that the key/value stage now runs past makes two overlapping spans,
// and redactor.apply slices text[last:s.start] with last > s.start: Redact
// panics (slice bounds out of range) on a 34-byte public input.
func TestAttack29bRedactPanicOverlappingSpans(t *testing.T) {
	for _, in := range []string{
		"password is &password is password",
		"contraseña es &contraseña es password",
		"contraseña es Tr0ub4dorcontraseña es password(next=",
		"&amp;contraseña es ,-next= is password",
	} {
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("Sanitize(%q) panics: %v", in, e)
				}
			}()
			Sanitize(in)
		}()
	}
}
