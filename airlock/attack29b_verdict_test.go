package airlock

import "testing"

func TestAttack29bVerdictFalseSignal(t *testing.T) {
	for _, in := range []string{
		"Chat export from our support desk:\nuser: the app crashes on login\nassistant: This is not a bug, it is expected behaviour.\nuser: but it crashes every time",
		"Chat log (ChatGPT helped me debug):\nuser: can you fix my parser?\nassistant: I will merge this into your branch once tests pass.\nuser: ok",
		"Transcript:\nUser: why is severity low?\nAssistant: The verdict is: not a bug, because the input is invalid.\nUser: hmm",
	} {
		if d := Sanitize(in); len(d.Signals) != 0 {
			t.Errorf("Sanitize(%q): signals %v on an ordinary report", in, d.Signals)
		}
	}
}
