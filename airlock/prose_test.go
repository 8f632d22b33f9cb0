package airlock_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/airlock"
)

// prosePasswordCases state a password in a sentence, in the eight
// languages findProsePasswords knows, with the verbs, prepositions and
// quotes reporters use.
var prosePasswordCases = []redactCase{
	// en
	{"en is", "my password is Hunter2! and it fails", "my password is [password]! and it fails"},
	{"en was changed to", "The password was changed to Tr0ub4dor&3 last week.", "The password was changed to [password] last week."},
	{"en is set to", "our wifi password is set to blue-Heron-77, see", "our wifi password is set to [password], see"},
	{"en still is", "the password still is 12345678", "the password still is [password]"},
	{"en is now", "My password is now fjordTulip, the app rejects it", "My password is now [password], the app rejects it"},
	{"en colon after copula", "my password is: s3cret!", "my password is: [password]!"},
	{"en set to", "I set the password to ravenclaw1987 yesterday", "I set the password to [password] yesterday"},
	{"en changed my password to", "I changed my password to 'letmein' and now", "I changed my password to '[password]' and now"},
	{"en logged in with the password", "logged in with the password hunter2 fine", "logged in with the password [password] fine"},
	{"en using password", "using password Tr0ub4dor&3 on the CLI", "using password [password] on the CLI"},
	{"en tried quoted", "I tried the password 'letmein' twice", "I tried the password '[password]' twice"},
	{"en double quotes", `the password "correct-horse" does not work`, `the password "[password]" does not work`},
	{"en curly quotes", "the password “Blue42” is refused", "the password “[password]” is refused"},
	{"en quoted with punctuation inside", `my password is "Sommer2024!" still`, `my password is "[password]" still`},
	{"en quoted phrase with a digit", `my password is 'Sommer 2024' now`, `my password is '[password]' now`},
	{"en relative clause", "the password I use is Marigold#442 and", "the password I use is [password] and"},
	{"en prepositional phrase", "The password for the admin account is Adm1n-2024.", "The password for the admin account is [password]."},
	{"en passcode", "my passcode is 482913", "my passcode is [password]"},
	{"en passphrase", "the passphrase was 'open sesame 42'", "the passphrase was '[password]'"},
	{"en all caps", "MY PASSWORD IS HUNTER22", "MY PASSWORD IS [password]"},
	{"en sentence end", "My password is ravenclaw1987.", "My password is [password]."},
	{"en in brackets", "(my password is abc12345)", "(my password is [password])"},
	{"en also", "the password is also Kiwi#77", "the password is also [password]"},
	{"en cli flag", "ran it with --password Tr0ub4dor&3 and", "ran it with --password [password] and"},
	{"en contraction", "my password's Hunter22 by the way", "my password's [password] by the way"},
	{"en either", "the password is either Kiwi#77 or", "the password is either [password] or"},
	{"en leading hash", "my password is #Hunter22", "my password is [password]"},
	{"en value before", "Tr0ub4dor&3 is my password.", "[password] is my password."},
	{"en value before as", "I used 'letmein' as the password and it failed", "I used '[password]' as the password and it failed"},
	{"de value before", "Sommer2024! ist mein Passwort, aber", "[password] ist mein Passwort, aber"},
	{"es value before", "uso Gatito_99 como contraseña", "uso [password] como contraseña"},
	{"en value repeated", "my password is Kiwi2024 and Kiwi2024 also", "my password is [password] and [password] also"},
	// es
	{"es de Gmail", "mi contraseña de Gmail es Perro_2020", "mi contraseña de Gmail es [password]"},
	{"es es", "mi contraseña es gatito99 y no entra", "mi contraseña es [password] y no entra"},
	{"es without tilde", "mi contrasena es Lucero_2291, la acabo de cambiar", "mi contrasena es [password], la acabo de cambiar"},
	{"es que puse fue", "La contraseña que puse fue NubeRoja44 y falla", "La contraseña que puse fue [password] y falla"},
	{"es sigue siendo", "la contraseña sigue siendo Perro#12", "la contraseña sigue siendo [password]"},
	{"es cambié a", "cambié la contraseña a Verano2023 ayer", "cambié la contraseña a [password] ayer"},
	{"es nueva es", "la contraseña nueva es Luna_77", "la contraseña nueva es [password]"},
	// de
	{"de lautet", "Mein Passwort lautet Sommer2024!", "Mein Passwort lautet [password]!"},
	{"fr apostrophe inside the value", "Mon mot de passe est L'hiver#2026 et il contient une apostrophe", "Mon mot de passe est [password] et il contient une apostrophe"},
	{"en apostrophe inside the value", "my password is o'Brien99 since May", "my password is [password] since May"},
	{"de ist", "mein Passwort ist Kranich!58, trotzdem", "mein Passwort ist [password], trotzdem"},
	{"de auf geändert", "Ich habe mein Passwort auf Fichte2207 geändert", "Ich habe mein Passwort auf [password] geändert"},
	{"de Kennwort", "Das Kennwort ist jetzt Geheim123.", "Das Kennwort ist jetzt [password]."},
	{"de German quotes", "das Passwort lautet „Blume!7“ seit", "das Passwort lautet „[password]“ seit"},
	{"de mit dem Passwort", "mit dem Passwort Tanne#9 geht es nicht", "mit dem Passwort [password] geht es nicht"},
	// fr
	{"fr guillemets", "mon mot de passe est « Soleil42 » depuis", "mon mot de passe est « [password] » depuis"},
	{"fr est", "mon mot de passe est soleil123 et", "mon mot de passe est [password] et"},
	{"fr c'est", "Mot de passe c'est Rossignol#19", "Mot de passe c'est [password]"},
	{"fr comme mot de passe", "J'ai choisi comme mot de passe Galet-Bleu-62 mais", "J'ai choisi comme mot de passe [password] mais"},
	{"fr était", "mon ancien mot de passe était Chat_2020", "mon ancien mot de passe était [password]"},
	// pt
	{"pt é", "minha senha é gatinho12 e não entra", "minha senha é [password] e não entra"},
	{"pt para", "Troquei a senha para cajueiro2024 ontem", "Troquei a senha para [password] ontem"},
	{"pt palavra-passe", "a minha palavra-passe é Lisboa#21", "a minha palavra-passe é [password]"},
	{"pt foi", "a senha foi Jabuti@4471, tentei de novo", "a senha foi [password], tentei de novo"},
	// it
	{"it è", "la mia password è Gabbiano!73 ma", "la mia password è [password] ma"},
	{"it impostato a", "Ho impostato la password a Ciliegia_908 e", "Ho impostato la password a [password] e"},
	{"it era", "la password era mare2021", "la password era [password]"},
	// zh
	{"zh 是", "我的密码是abc12345", "我的密码是[password]"},
	{"zh 是 with fullwidth comma", "我的密码是qiuyue8831，但是一直提示密码错误。", "我的密码是[password]，但是一直提示密码错误。"},
	{"zh 为 spaced", "密码为 Lanmao_520 一直没有变过", "密码为 [password] 一直没有变过"},
	{"zh 改成", "我把密码改成了Xiaomao99", "我把密码改成了[password]"},
	{"zh traditional", "我的密碼是 tw2024pass", "我的密碼是 [password]"},
	{"zh 输入的是", "密码输入的是 hello2024 还是不行", "密码输入的是 [password] 还是不行"},
	{"zh latin word", "密码是 sunshine", "密码是 [password]"},
	{"zh colon after copula", "密码是：qwerty123", "密码是：[password]"},
	// hi
	{"hi value then hai", "मेरा पासवर्ड Aam@Ras2291 है लेकिन", "मेरा पासवर्ड [password] है लेकिन"},
	{"hi hai then value", "पासवर्ड है neelkamal77 और", "पासवर्ड है [password] और"},
	{"hi latin word", "मेरा पासवर्ड sunflower है", "मेरा पासवर्ड [password] है"},
	{"hi ko", "मैंने पासवर्ड को Mango#45 कर दिया", "मैंने पासवर्ड को [password] कर दिया"},
	{"hinglish", "mera password Tota#8812 hai, phir bhi", "mera password [password] hai, phir bhi"},
	{"hinglish hai first", "mera password hai chiku2020", "mera password hai [password]"},
}

// prosePasswordNegatives talk about passwords without stating one: they
// must come back unchanged.
var prosePasswordNegatives = []string{
	"Mon mot de passe est l'ancien, je ne l'ai pas changé.",
	"my password isn't working since the update",
	// en
	"my password is wrong", "My password is incorrect.", "the password is expired and the reset link too",
	"My password is too short for the new form", "the password is not accepted", "my password is being rejected",
	"the password is the same as before", "a password is required", "the password was reset yesterday",
	"The password field is empty after autofill on Safari 17, so login fails every time.",
	"Reset password email never arrives, I checked the spam folder too.",
	"I forgot my password and the reset link in the email has already expired.",
	"the password is 12 characters long", "the password is at least 12 characters", "the password is 1234 characters",
	"the password was changed on 2024-03-01", "the password is 50/50 accepted", "the password was 12:30", "the password is 2FA-protected", "my password is 12-character", "the password must be 8-16 characters", "the password is 100% correct",
	"my password is visible in the logs", "the password is stored in plaintext", "password is case-sensitive",
	"the password is bcrypt-hashed", "our password policy is NIST-aligned", "the password is SHA256 hashed",
	"the password manager is 1Password", "the password is JavaScript-validated", "my password is in the vault",
	"the password is [password]", "password: [password]", "passwords are 8 chars", "password123 is bad",
	"upgrade the password hashing in 2.4.1", "password 2024 policy update", "the password is v2.3.1",
	`the error says "password incorrect"`, `clicked "Forgot password" then "Reset"`, "my password is ... hidden",
	"my password is ********", "password VARCHAR(255) NOT NULL", "if password is None:",
	"the password is also used for the VPN", "I use 1Password as my password manager",
	"version 2.4.1 is the password release", "SHA256 as the password hash", "Step 3 is the password.", "the password is <your password>", "the password is $DB_PASSWORD",
	"the password is (see the attachment)", "password is N/A", "the password 'expired' message shows",
	`my password is "too weak" according to the app`, "My password is the one from the email",
	// es
	"Mi contraseña es correcta, pero la app dice que la cuenta está bloqueada.", "mi contraseña es incorrecta",
	"la contraseña es demasiado corta", "la contraseña no es válida", "la contraseña está caducada",
	// de
	"Mein Passwort ist abgelaufen und der Link führt zu einer 404-Seite.", "mein Passwort ist falsch",
	"das Passwort ist 8-stellig", "das Passwort muss 8 Zeichen haben",
	"das Passwort ist zu kurz", "das Kennwort ist nicht mehr gültig", "Das Passwort ist Pflicht",
	// fr
	"Mon mot de passe est refusé depuis la mise à jour, alors qu'il n'a pas changé.", "mon mot de passe est incorrect",
	"le mot de passe est trop court", "mon mot de passe est expiré",
	// pt
	"Esqueci minha senha e o e-mail de redefinição não chega.", "minha senha é incorreta", "a senha está errada",
	"a senha é muito curta", "minha senha foi alterada ontem",
	// it
	"La mia password è scaduta e il modulo di reimpostazione non invia nessuna email.", "la mia password è sbagliata",
	"la password è troppo corta", "la password non è valida",
	// zh
	"忘记密码页面打不开，点了以后一直转圈。", "密码错误", "我的密码是错的", "密码为空", "密码是 wrong", "密码改成了新的",
	"密码是 reset 之后的", "密码长度是 8 位", "密码是 8-16 位", "密码是6个字符", "密码是6位数字",
	// hi
	"मेरा पासवर्ड सही है लेकिन ऐप बार-बार गलत बताता है।", "पासवर्ड गलत है", "mera password galat hai",
	"पासवर्ड reset नहीं हो रहा", "मेरा पासवर्ड expired है", "password change karna hai",
}

func TestRedactProsePassword(t *testing.T) {
	t.Parallel()
	runRedactCases(t, prosePasswordCases)
}

func TestRedactProsePasswordNegatives(t *testing.T) {
	t.Parallel()
	for _, in := range prosePasswordNegatives {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			got, reds := airlock.Redact(in)
			for _, r := range reds {
				if r.Kind == airlock.KindPassword && !strings.Contains(in, "[password]") {
					t.Fatalf("Redact(%q) = %q: a password where there is none", in, got)
				}
			}
		})
	}
}

// Every prose password, wherever it sits in a report, is gone from the
// dossier, and the dossier is a fixed point of Redact.
func TestSanitizeProsePasswordInContext(t *testing.T) {
	t.Parallel()
	for _, tc := range prosePasswordCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, wrap := range [][2]string{
				{"", ""},
				{"Steps:\n1. open the app\n", "\nThanks!"},
				{"jane@example.com wrote: ", " (call +49 30 1234567)"},
			} {
				d := airlock.Sanitize(wrap[0] + tc.in + wrap[1])
				if again, more := airlock.Redact(d.Text); again != d.Text || more != nil {
					t.Fatalf("Redact of %q found more: %q %v", d.Text, again, more)
				}
				if !strings.Contains(d.Text, "[password]") {
					t.Fatalf("Sanitize(%q).Text = %q: no password redacted", tc.in, d.Text)
				}
			}
		})
	}
}

// FuzzSanitizeProse puts a sentence stating a password on its own line
// between arbitrary text: the password must not reach the dossier unless
// the surrounding text spells it too, and the dossier is a fixed point of
// Redact.
func FuzzSanitizeProse(f *testing.F) {
	type stated struct{ text, secret string }
	var cases []stated
	for _, c := range prosePasswordCases {
		k := strings.Index(c.want, "[password]")
		if strings.Count(c.want, "[password]") != 1 || k < 0 {
			continue
		}
		n := len(c.in) - len(c.want) + len("[password]")
		cases = append(cases, stated{c.in, c.in[k : k+n]})
	}
	for i, c := range prosePasswordCases {
		f.Add("", uint8(i), c.in)
	}
	for i, in := range prosePasswordNegatives {
		f.Add(in, uint8(i), "")
	}
	f.Fuzz(func(t *testing.T, prefix string, which uint8, suffix string) {
		c := cases[int(which)%len(cases)]
		d := airlock.Sanitize(prefix + "\n" + c.text + "\n" + suffix)
		if again, more := airlock.Redact(d.Text); again != d.Text || more != nil {
			t.Fatalf("Redact of %q found more: %q %v", d.Text, again, more)
		}
		np, _ := airlock.Normalize(prefix)
		ns, _ := airlock.Normalize(suffix)
		if strings.Contains(np, c.secret) || strings.Contains(ns, c.secret) {
			return
		}
		if strings.Contains(d.Text, c.secret) {
			t.Fatalf("%q: dossier %q still contains %q", c.text, d.Text, c.secret)
		}
	})
}

// FuzzRedactProse checks Redact on raw text near prose passwords: a fixed
// point, valid UTF-8 in, valid UTF-8 out.
func FuzzRedactProse(f *testing.F) {
	for _, c := range prosePasswordCases {
		f.Add(c.in)
	}
	for _, in := range prosePasswordNegatives {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, _ := airlock.Redact(in)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("Redact(%q) = %q: invalid UTF-8", in, out)
		}
		if again, more := airlock.Redact(out); again != out || more != nil {
			t.Fatalf("Redact is not idempotent on %q: %q -> %q %v", in, out, again, more)
		}
	})
}

// The scan reads eight bytes a step and the end of a text as one word:
// a keyword is found at every alignment, up to the last byte.
func TestRedactProsePasswordAtAnyOffset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ sentence, value string }{
		{"PASSWORD IS Kiwi#2024", "Kiwi#2024"},
		{"Kennwort ist Tanne#99", "Tanne#99"},
		{"senha é Caju2024", "Caju2024"},
		{"contraseña es Luna_77", "Luna_77"},
		{"密码是abc12345", "abc12345"},
		{"पासवर्ड है neel77x", "neel77x"},
	} {
		for n := range 20 {
			in := strings.Repeat("x", n) + " " + c.sentence
			got, _ := airlock.Redact(in)
			if strings.Contains(got, c.value) || !strings.Contains(got, "[password]") {
				t.Errorf("Redact(%q) = %q", in, got)
			}
		}
	}
}
