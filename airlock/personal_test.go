package airlock_test

import (
	"testing"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/airlock"
)

// Valid numbers below were computed with each scheme's check; the invalid
// ones differ from a valid one in the check digit or break a structure
// rule.
var ssnCases = []redactCase{
	{"ssn dashed", "The W-9 shows my SSN 386-02-9209 in full.", "The W-9 shows my SSN [us-ssn] in full."},
	{"ssn dashed needs no word", "id 386-02-9209 on file", "id [us-ssn] on file"},
	{"ssn spaced with word", "my ssn is 386 02 9209", "my ssn is [us-ssn]"},
	{"ssn bare with word", "Social Security: 386029209, thanks", "Social Security: [us-ssn], thanks"},
	{"ssn glued after colon", "SSN:386029209", "SSN:[us-ssn]"},
	{"ssn word a line before", "SSN field\n386029209", "SSN field\n[us-ssn]"},
	{"ssn area 010 is not a phone", "social security number 010-84-4265.", "social security number [us-ssn]."},
	{"ssn dotted with word", "SSN 386.02.9209", "SSN [us-ssn]"},
	{"ssn in a query", "ssn=386029209&x=1", "ssn=[us-ssn]&x=1"},
	{"ssn in json", `{"ssn": "386029209"}`, `{"ssn": "[us-ssn]"}`},
	{"ssn glued to others", "my SSN:386-02-9209;NINO:JG103759A;CPF:529.982.247-25", "my SSN:[us-ssn];NINO:[uk-nino];CPF:[br-cpf]"},
	{"ssn repeated", "SSN 386-02-9209, again 386-02-9209", "SSN [us-ssn], again [us-ssn]"},
	{"ssn area 9xx", "Our order numbers look like 900-42-7781.", "Our order numbers look like 900-42-7781."},
	{"ssn area 666", "Error code 666-12-0042 appears.", "Error code 666-12-0042 appears."},
	{"ssn area 000", "SSN 000-12-3456", "SSN 000-12-3456"},
	{"ssn group 00", "SSN 123-00-4567", "SSN 123-00-4567"},
	{"ssn serial 0000", "SSN 123-45-0000", "SSN 123-45-0000"},
	{"ssn bare without word", "build 386029209 failed", "build 386029209 failed"},
	{"ssn spaced without word", "counts 386 02 9209", "counts 386 02 9209"},
	{"ssn prefixed id", "ORD-386-02-9209", "ORD-386-02-9209"},
	{"ssn inside a longer number", "386-02-92091", "386-02-92091"},
	{"ssn word in a placeholder", "[us-ssn] then 386029209", "[us-ssn] then 386029209"},
	{"ssn date", "SSN reset on 2024-01-15", "SSN reset on 2024-01-15"},
	{"phone stays a phone", "SSN unknown, call (555) 123-4567", "SSN unknown, call [phone]"},
}

var ninoCases = []redactCase{
	{"nino spaced", "NI number AB 12 34 56 C is rejected", "NI number [uk-nino] is rejected"},
	{"nino glued needs no word", "autofill puts JG103759A into the postcode", "autofill puts [uk-nino] into the postcode"},
	{"nino spaced no word", "printed JG 10 37 59 A on the P60", "printed [uk-nino] on the P60"},
	{"nino lower case with word", "my nino: jg103759a", "my nino: [uk-nino]"},
	{"nino no suffix with word", "National Insurance JG 10 37 59", "National Insurance [uk-nino]"},
	{"nino all lower case", "NINO ab 12 34 56 c", "NINO [uk-nino]"},
	{"nino in parentheses", "(JG103759A)", "([uk-nino])"},
	{"nino first letter Q", "The NI field rejects QQ 12 34 56 C, the help text example.", "The NI field rejects QQ 12 34 56 C, the help text example."},
	{"nino prefix GB", "NINO GB123456A", "NINO GB123456A"},
	{"nino second letter O", "NINO AO123456B", "NINO AO123456B"},
	{"nino first letter D", "NINO DA123456B", "NINO DA123456B"},
	{"nino no suffix no word", "ticket AB123456 closed", "ticket AB123456 closed"},
	{"nino suffix E", "code AB123456E", "code AB123456E"},
	{"nino inside a word", "XAB123456C", "XAB123456C"},
	{"nino lower case no word", "hash jg103759a", "hash jg103759a"},
	{"nino spaced article", "row AB 12 34 56 a new one", "row AB 12 34 56 a new one"},
}

var inseeCases = []redactCase{
	{"nir spaced", "Mon NIR 1 84 12 76 451 089 46 s'affiche.", "Mon NIR [fr-insee] s'affiche."},
	{"nir spaced needs no word", "attestation 1 84 12 76 451 089 46", "attestation [fr-insee]"},
	{"nir key apart", "1841276451089 46", "[fr-insee]"},
	{"nir bare with word", "numéro de sécurité sociale 184127645108946", "numéro de sécurité sociale [fr-insee]"},
	{"nir corsica", "Numéro de sécu 2 55 08 2A 123 456 46 refusé", "Numéro de sécu [fr-insee] refusé"},
	{"nir corsica bare", "NIR 255082A12345646", "NIR [fr-insee]"},
	{"nir corsica wrong key", "NIR 255082B12345646", "NIR 255082B12345646"},
	{"nir sex 2", "INSEE 2 79 01 57 071 778 37", "INSEE [fr-insee]"},
	{"nir wrong key", "Le numéro de dossier 2 79 01 57 071 778 46 est refusé", "Le numéro de dossier 2 79 01 57 071 778 46 est refusé"},
	{"nir bare without word", "commande 184127645108946", "commande 184127645108946"},
	{"nir sex 5", "NIR 5 84 12 76 451 089 46", "NIR 5 84 12 76 451 089 46"},
	{"nir month 13", "NIR 1 84 13 76 451 089 46", "NIR 1 84 13 76 451 089 46"},
	{"nir build number", "Build 20240315184211 from commit 8f3a2c1", "Build 20240315184211 from commit 8f3a2c1"},
}

var taxIDCases = []redactCase{
	{"steuer-id bare", "Meine Steuer-ID 86095742719 wird angezeigt.", "Meine Steuer-ID [de-taxid] wird angezeigt."},
	{"steuer-id grouped", "die Steueridentifikationsnummer 86 095 742 719 im Dateinamen", "die Steueridentifikationsnummer [de-taxid] im Dateinamen"},
	{"steuer-id idnr", "IdNr 47158379209 schlägt fehl", "IdNr [de-taxid] schlägt fehl"},
	{"steuer-id english", "German tax ID: 12345678911", "German tax ID: [de-taxid]"},
	{"steuer-id after colon and phrase", "Steuerliche Identifikationsnummer: 47158379209 – im Chat", "Steuerliche Identifikationsnummer: [de-taxid] – im Chat"},
	{"steuer-id no word", "Belegnummer 86095742719", "Belegnummer 86095742719"},
	{"steuer-id wrong check", "Steuer-ID 86095742718", "Steuer-ID 86095742718"},
	{"steuer-id no repeated digit", "Steuer-ID 57302816491", "Steuer-ID 57302816491"},
	{"steuer-id word after", "Die Belegnummer 41562113902 sieht aus wie eine Steuer-ID", "Die Belegnummer 41562113902 sieht aus wie eine Steuer-ID"},
	{"amount with spaces", "Umsatz 86 095 742 719 €", "Umsatz 86 095 742 719 €"},
	{"invoice", "Rechnung 2024-000847-11, Kundennummer 50012874, Version 3.18.2", "Rechnung 2024-000847-11, Kundennummer 50012874, Version 3.18.2"},
}

var aadhaarCases = []redactCase{
	{"aadhaar grouped", "Aadhaar 2345 6789 0124 shows in full", "Aadhaar [in-aadhaar] shows in full"},
	{"aadhaar grouped needs no word", "KYC id 2345 6789 0124.", "KYC id [in-aadhaar]."},
	{"aadhaar bare with word", "आधार 234567890124 दिख रहा है", "आधार [in-aadhaar] दिख रहा है"},
	{"aadhaar dashed with word", "aadhar no. 3599-4185-6603", "aadhar no. [in-aadhaar]"},
	{"aadhaar mistyped but named", "my Aadhaar number 2345 6789 0125 leaks", "my Aadhaar number 2345 6789 0125 leaks"}, // a wrong check digit: not an Aadhaar number
	{"aadhaar named in Hindi", "आधार संख्या 8568 5473 7323 डालने पर", "आधार संख्या [in-aadhaar] डालने पर"},
	{"aadhaar bad check no word", "ref 2345 6789 0125", "ref 2345 6789 0125"},
	{"aadhaar first digit 1", "Aadhaar 1234 5678 9012", "Aadhaar 1234 5678 9012"},
	{"aadhaar dashed without word", "Transaction 3301-2026-7783 failed", "Transaction 3301-2026-7783 failed"},
	{"aadhaar bare without word", "Order ID 234567890124 refund", "Order ID 234567890124 refund"},
	{"aadhaar word after", "Order id 5901 2754 2053 shows as 'Aadhaar masked'", "Order id 5901 2754 2053 shows as 'Aadhaar masked'"},
	{"aadhaar word in an earlier sentence", "Aadhaar works. Order 5901 2754 2053 fails", "Aadhaar works. Order 5901 2754 2053 fails"},
	{"card stays a card", "Aadhaar? no, card 4111 1111 1111 1111", "Aadhaar? no, card [card]"},
}

var cpfCases = []redactCase{
	{"cpf formatted", "O app mostra meu CPF 529.982.247-25 completo.", "O app mostra meu CPF [br-cpf] completo."},
	{"cpf formatted needs no word", "cliente 529.982.247-25.", "cliente [br-cpf]."},
	{"cpf bare with word", "o campo CPF só aceita números: digitei 52998224725 e deu erro", "o campo CPF só aceita números: digitei [br-cpf] e deu erro"},
	{"cpf check apart", "cpf 529982247-25", "cpf [br-cpf]"},
	{"cpf leading zero", "CPF 111.444.777-35", "CPF [br-cpf]"},
	{"cpf wrong check", "CPF 529.982.247-26", "CPF 529.982.247-26"},
	{"cpf one digit", "CPF 111.111.111-11", "CPF 111.111.111-11"},
	{"cpf bare without word", "nota fiscal 52998224725 — o PDF", "nota fiscal 52998224725 — o PDF"},
	{"cpf word after", "O número do pedido 844.085.044-98 tem o formato de um CPF", "O número do pedido 844.085.044-98 tem o formato de um CPF"},
	{"ip address", "CPF service at 192.168.100.200", "CPF service at 192.168.100.200"},
}

var addressCases = []redactCase{
	// Shipping labels in capitals.
	{"us all caps", "Ship to: 742 EVERGREEN TERRACE SPRINGFIELD OR 97475", "Ship to: [postal-address]"},
	{"uk all caps", "SHIP TO: 10 DOWNING STREET, LONDON SW1A 2AA", "SHIP TO: [postal-address]"},
	{"fr all caps", "12 RUE DE LA PAIX, 75002 PARIS", "[postal-address]"},
	{"es all caps", "CALLE MAYOR 10, 28013 MADRID", "[postal-address]"},
	{"caps log lines are no address", "WARN 3 RETRIES ON STREAM CT 40000 BYTES; COPY 5 FILES TO DRIVE D 10000", "WARN 3 RETRIES ON STREAM CT 40000 BYTES; COPY 5 FILES TO DRIVE D 10000"},
	{"units in capitals are no street", "Upgraded 3 CPU cores and set 12 GB RAM, 404 NOT FOUND", "Upgraded 3 CPU cores and set 12 GB RAM, 404 NOT FOUND"},
	{"us full", "Ship to 1600 Amphitheatre Parkway, Mountain View, CA 94043 please", "Ship to [postal-address] please"},
	{"us unit city state zip", "Package for 2817 Birchwood Ave, Apt 4B, Columbus, OH 43215 shows delivered", "Package for [postal-address] shows delivered"},
	{"us direction", "pin for 455 W Harmon Rd, Tucson, AZ 85705 lands", "pin for [postal-address] lands"},
	{"us ordinal", "350 5th Ave, New York, NY 10118", "[postal-address]"},
	{"us zip+4", "12 Harbor View Dr, Portland, OR 97201-1234.", "[postal-address]."},
	{"us zip+4 with a trunk zero", "12 Harbor View Dr, Portland, ME 04101-1234.", "[postal-address]."},
	{"us two addresses", "from 90 Maple Street, Burlington, VT 05401 to 12 Harbor View Dr, Portland, ME 04101 fails",
		"from [postal-address] to [postal-address] fails"},
	{"uk baker street", "221B Baker St Apt 4", "[postal-address]"},
	{"uk postcode", "10 Downing Street, London SW1A 2AA", "[postal-address]"},
	{"uk flat before", "The courier shows Flat 3, 42 Albion Road, Bristol BS5 6LR as undeliverable", "The courier shows [postal-address] as undeliverable"},
	{"uk close", "my address 17 Kestrel Close, Norwich NR4 7TJ with", "my address [postal-address] with"},
	{"uk on two lines", "10 Downing Street\nLondon SW1A 2AA\nthanks", "[postal-address]\nthanks"},
	{"street ends the sentence", "Deliver to 24 Sussex Drive. Thanks", "Deliver to [postal-address]. Thanks"},
	{"city ends the clause", "I live at 24 Sussex Drive, Ottawa. Please fix", "I live at [postal-address]. Please fix"},
	{"city and prose", "Avenida Paulista 1578, São Paulo; Hauptstraße 5, Berlin ist schön", "[postal-address]; [postal-address], Berlin ist schön"},
	{"quoted with a postcode", "I typed '2817 Birchwood Ave, Apt 4B, Columbus, OH 43215' and it failed", "I typed '[postal-address]' and it failed"},
	{"canada", "24 Sussex Drive, Ottawa, ON K1M 1M4", "[postal-address]"},
	{"de", "Hauptstraße 5, 10115 Berlin", "[postal-address]"},
	{"de abbreviation", "Lieferung an Bahnhofstr. 12a geht nicht", "Lieferung an [postal-address] geht nicht"},
	{"de ss", "Die Adresse Lindenstrasse 48, D-04109 Leipzig fehlt", "Die Adresse [postal-address] fehlt"},
	{"de preposition", "Die Rechnungsadresse Am Mühlbach 7a, 82041 Oberhaching erscheint", "Die Rechnungsadresse [postal-address] erscheint"},
	{"de two words", "Lange Straße 3, 26122 Oldenburg", "[postal-address]"},
	{"ch", "Bahnhofstrasse 1, 8001 Zürich", "[postal-address]"},
	{"fr", "Le livreur n'a pas trouvé le 12 rue de la Paix, 75002 Paris, alors", "Le livreur n'a pas trouvé le [postal-address], alors"},
	{"fr avenue", "l'adresse 8 avenue Jean Jaurès, 69007 Lyon est enregistrée", "l'adresse [postal-address] est enregistrée"},
	{"fr bis", "14 bis rue des Tanneurs, 67000 Strasbourg", "[postal-address]"},
	{"es", "Calle Mayor 10, 28013 Madrid", "[postal-address]"},
	{"es floor", "mi dirección: Calle de Goya 61, 2o izquierda, 28001 Madrid.", "mi dirección: [postal-address]."},
	{"es c/", "Vivo en C/ Mayor 5, 3o dcha, 28013 Madrid", "Vivo en [postal-address]"},
	{"ar", "Vivo en Av. Corrientes 1234, CABA", "Vivo en [postal-address]"},
	{"it", "L'indirizzo Via dei Mille 22, 80121 Napoli viene salvato", "L'indirizzo [postal-address] viene salvato"},
	{"it no postcode", "consegna in Piazza Navona 12 non trovata", "consegna in [postal-address] non trovata"},
	{"pt", "A morada Rua de Santa Catarina 312, 4000-447 Porto não é aceite", "A morada [postal-address] não é aceite"},
	{"br", "Rua Augusta 100, 01305-000 São Paulo", "[postal-address]"},
	{"br long", "O endereço Av. Paulista, 1578, ap. 92, Bela Vista, São Paulo - SP, 01310-200 aparece cortado",
		"O endereço [postal-address] aparece cortado"},
	{"nl", "Het afleveradres Lange Nieuwstraat 81, 3512 PJ Utrecht wordt", "Het afleveradres [postal-address] wordt"},
	{"nl gracht", "Keizersgracht 123, 1015 CJ Amsterdam", "[postal-address]"},
	{"pl", "ul. Marszałkowska 10, 00-950 Warszawa", "[postal-address]"},
	{"au", "I live at 42 Wallaby Way, Sydney NSW 2000", "I live at [postal-address]"},
	{"be", "Rue Neuve 12, 1000 Bruxelles", "[postal-address]"},
	{"fr type first", "Boulevard Saint-Germain 45", "[postal-address]"},
	{"at", "Mariahilfer Straße 1, 1060 Wien", "[postal-address]"},
	{"de in prose", "Ich wohne in der Goethestraße 12 in München", "Ich wohne in der [postal-address] in München"},
	{"nl without a street word", "Het adres Damrak 1, 1012 LG Amsterdam klopt niet", "Het adres [postal-address] klopt niet"},
	{"pt without a street word", "Largo 5, 1200-195 Lisboa", "[postal-address]"},
	{"address then phone", "10 Downing Street, London SW1A 2AA, tel 020 7946 0958", "[postal-address], tel [phone]"},

	{"line and street word", "line 42, Street View component", "line 42, Street View component"},
	{"version road map", "Version 2 Road map", "Version 2 Road map"},
	{"street word without number", "Main Street in the UI mock", "Main Street in the UI mock"},
	{"port", "listening on port 8080", "listening on port 8080"},
	{"file name", "Panic at line 42 of main street.go when empty (v1.8.3).", "Panic at line 42 of main street.go when empty (v1.8.3)."},
	{"version build", "Version 12 Main build fails to start on macOS 14.4; build 11 works.", "Version 12 Main build fails to start on macOS 14.4; build 11 works."},
	{"route level", "The level 'Route 66' crashes at checkpoint 12 on Switch, game version 2.0.4.", "The level 'Route 66' crashes at checkpoint 12 on Switch, game version 2.0.4."},
	{"quoted street name", "Im Spiel wird der Levelname 'Hauptstraße 2' abgeschnitten, Version 3.1.", "Im Spiel wird der Levelname 'Hauptstraße 2' abgeschnitten, Version 3.1."},
	{"quoted without a postcode", `the level "12 Harbor View Dr" and «Via Roma 1»`, `the level "12 Harbor View Dr" and «Via Roma 1»`},
	{"monopoly", "la case « Rue de la Paix » affiche 200 € au lieu de 400 €.", "la case « Rue de la Paix » affiche 200 € au lieu de 400 €."},
	{"building floor", "mislabels rooms in 'Building 4, Floor 12' after the upgrade.", "mislabels rooms in 'Building 4, Floor 12' after the upgrade."},
	{"error and city", "Error 10115 from the Berlin region server when uploading files over 2 GB.", "Error 10115 from the Berlin region server when uploading files over 2 GB."},
	{"product with street word", "I uploaded 5 Google Drive files and 2 Hard Drive images", "I uploaded 5 Google Drive files and 2 Hard Drive images"},
	{"suite of a test plan", "Suite 3.2 of the test plan, Version 2, Section 4", "Suite 3.2 of the test plan, Version 2, Section 4"},
	{"via a tool", "I sent it via Slack 3 times", "I sent it via Slack 3 times"},
	{"string", "String 5, then Spring 2024", "String 5, then Spring 2024"},
	{"devices", "Pixel 7, Android 14, Python 3, Windows 10 Pro, Ubuntu 22.04, 12 GB RAM", "Pixel 7, Android 14, Python 3, Windows 10 Pro, Ubuntu 22.04, 12 GB RAM"},
	{"chapter", "see Chapter 3 Baker Street in the guide", "see Chapter 3 Baker Street in the guide"},
	{"path", "see src/Street.go:42 and 3 Place holders", "see src/Street.go:42 and 3 Place holders"},
	{"time and price", "at 12:30 on Main Street it costs 12.50 Road tax", "at 12:30 on Main Street it costs 12.50 Road tax"},
	{"stack trace", "at com.shop.Checkout.Street(Checkout.java:42)\n\tat 3 Lane", "at com.shop.Checkout.Street(Checkout.java:42)\n\tat 3 Lane"},
	{"products", "Reproduced on 3 Windows Server machines and 2 Mac Mini boxes, Chrome 128 Beta", "Reproduced on 3 Windows Server machines and 2 Mac Mini boxes, Chrome 128 Beta"},
	{"steps", "Step 3: Open Settings, Step 4: Tap Privacy, Room 101", "Step 3: Open Settings, Step 4: Tap Privacy, Room 101"},
	{"street word in prose", "Die Hauptstraße ist 5 km lang; Ring 0 drivers, Spring 5, String 7.", "Die Hauptstraße ist 5 km lang; Ring 0 drivers, Spring 5, String 7."},
	{"via in prose", "uses Via 3 providers; Calle 50 is a song", "uses Via 3 providers; Calle 50 is a song"},
	{"postcode alone", "Error 1060 Wien", "Error 1060 Wien"},
	{"version and a number", "Android 14, 12345 Downloads; Version 3, 1012 LG Amsterdam", "Android 14, 12345 Downloads; Version 3, 1012 LG Amsterdam"},
	{"dates", "released 12 March 2024, 3 Mai 2024", "released 12 March 2024, 3 Mai 2024"},
}

func TestRedactNationalIDs(t *testing.T) {
	t.Parallel()
	for _, cs := range [][]redactCase{ssnCases, ninoCases, inseeCases, taxIDCases, aadhaarCases, cpfCases} {
		runRedactCases(t, cs)
	}
}

func TestRedactAddresses(t *testing.T) {
	t.Parallel()
	runRedactCases(t, addressCases)
}

// Sanitize normalizes before it redacts: full-width digits and the
// ordinal indicator arrive as ASCII.
func TestSanitizePersonal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"SSN ３８６-０２-９２０９", "SSN [us-ssn]"},
		{"CPF ５２９．９８２．２４７－２５", "CPF [br-cpf]"},
		{"La app no acepta: Calle de Goya 61, 2º izquierda, 28001 Madrid.", "La app no acepta: [postal-address]."},
		{"NIR 1\u200b84 12 76 451 089 46", "NIR [fr-insee]"},
	} {
		if got := airlock.Sanitize(tc.in).Text; got != tc.want {
			t.Errorf("Sanitize(%q).Text = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzRedactPersonal is FuzzRedact seeded with the identifiers and
// addresses: Redact must be a fixed point whatever surrounds them.
func FuzzRedactPersonal(f *testing.F) {
	for _, cs := range [][]redactCase{ssnCases, ninoCases, inseeCases, taxIDCases, aadhaarCases, cpfCases, addressCases} {
		for _, c := range cs {
			f.Add(c.in)
		}
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
