package triage

import (
	"fmt"
	"regexp"
	"strings"
)

// The category decision weighs evidence for each kind of feedback instead
// of taking the first rule that fires. Every piece of evidence is a general
// construction of user feedback in English, Spanish, German, French,
// Portuguese, Italian, Dutch and Polish, with a weight; each one that
// counts is written to the cues, so the decision can be read back.
//
//   - malfunction: failure words (crash, error, not working), an outcome
//     that differs from what was expected ("X but Y", "instead of", "still
//     shows", "should ... but"), a regression ("since the update"), "is it
//     just me", a request to check something, a low rating and a report
//     that carries device, version and steps;
//   - request: wish and modal constructions ("would be nice", "I'd like",
//     "please add"), and complaints about something missing ("why can't
//     I", "there is no option to");
//   - question: how-to and procedure questions ("how do I", "is there a
//     setting", "do I have to");
//   - praise: positive words, a high rating, thanks;
//   - spam: links (also obfuscated), contacts (phone numbers, messenger
//     handles), money and crypto offers, promo codes, also when they come
//     wrapped in praise.

// Spam evidence.
var (
	// An obfuscated address: a bracketed dot or "dot" between two labels
	// ("example[.]com", "example (dot) net", "example dot com"), or a
	// defanged scheme ("hxxp://", "h t t p s : //").
	reObfuscatedURL = regexp.MustCompile(`(?i)\b[a-z0-9-]{2,}\s*(?:[\[({]\s*(?:\.|dot|punkt|punto|ponto|point|kropka)\s*[\])}]|\s(?:dot|punkt|punto|ponto|kropka)\s)\s*[a-z]{2,6}\b|\bh\s*x\s*x\s*p\s*s?\s*:\s*/\s*/|\bh\s+t\s+t\s+p\s*s?\s*:\s*/\s*/`)
	reURL           = regexp.MustCompile(`(?i)https?://|\bwww\.|\b(?:t|wa)\.me/|\bbit\.ly/|\b[a-z0-9-]+\.(?:com|net|org|xyz|io|ru|cn|top|info|biz|site|online|click|link|shop|store|vip|live|club|win|bet|app|me)\b`)
	// A link that only points at evidence for the report (a screenshot or
	// a paste) is no promotion.
	reEvidenceURL = regexp.MustCompile(`(?i)\b(?:imgur|gyazo|prnt\.sc|prntscr|lightshot|ibb\.co|imgbb|postimg|postimages|tinypic|photobucket|flickr|pastebin|hastebin|paste\.ee|dpaste|ghostbin|privatebin|justpaste|gist\.github|github|gitlab|bitbucket|youtu\.?be|vimeo|streamable|drive\.google|dropbox|onedrive|wetransfer|loom)\b`)
	// Any link the text calls a screenshot, a recording or a log points
	// at evidence, whatever its host.
	reEvidenceWord = regexp.MustCompile(`(?i)\bscreen\s*shots?\b|\bscreen\s*(?:cast|recording|capture|grab)s?\b|\b(?:video|recording|log|logs|logfile|crash\s*log|trace|har\s+file)\b|\bcaptura(?:s)?\s+de\s+(?:pantalla|tela|ecr[ãa])\b|\bgrabaci[óo]n\b|\bbildschirm(?:foto|aufnahme)\w*\b|\baufnahme\b|\bcapture\s+d'[ée]cran\b|\benregistrement\b|\bgrava[çc][ãa]o\b|\bschermata\b|\bregistrazione\b|\bschermafbeelding\b|\bopname\b|\bzrzut\s+ekranu\b|\bnagranie\b|\bprint\s+(?:da\s+tela|screen)\b`)
	reFreeAmount   = regexp.MustCompile(`(?i)\b\d[\d,.kK]*\+?\s*free\b|\bfree\s+\d|\bgratis\s+\d|\b\d[\d,.]*\s*(?:gratis|kostenlos|gratuit|gratuito|darmowe?)`)
	rePromoCode    = regexp.MustCompile(`(?i:\b(?:enter|use|promo|redeem|coupon|bonus|gift|referral)\s+(?:the\s+|this\s+|my\s+)?codes?\b)|(?i:\b(?:code|c[oó]digo|gutschein|codice|kod)\s*:?\s*["'“]?)[A-Z][A-Z0-9]*\d[A-Z0-9]*\b`)
	// An international phone number or a messenger handle: a way to reach
	// someone outside the app.
	rePhone   = regexp.MustCompile(`\+\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{2,4}`)
	reContact = regexp.MustCompile(`(?i)\bwhats\s*app\b|\btelegram\b|\bwechat\b|\bviber\b|\bsnap\s*chat\b|\bdm\s+(?:me|us|him|her|'|"|‘|“)|\b(?:message|text|contact|add|reach|write\s+to)\s+(?:me|him|her|us|them)\s+(?:on|at|via)\b|\b(?:on|via|at)\s+(?:instagram|insta|tiktok|facebook|snapchat|discord|signal)\b|\b(?:schreib(?:t|en\s+sie)?\s+mir|[ée]cri(?:s|vez)-moi|me\s+escreva|schrijf\s+me|napisz\s+do\s+mnie|escr[ií]beme|escr[ií]bele|kontaktier\w*\s+(?:mich|ihn|sie)|contacte[rz]?[-\s]+(?:moi|le|la)|me\s+chama|scrivimi|contattami|napisz\s+do)\b`)
	// Money for nothing: earnings per time, multiplied money, passive
	// income, investment schemes and crypto.
	reMoneyOffer = regexp.MustCompile(`(?i)\b(?:earn|earning|earns|earned|make|making|made)\s+(?:up\s+to\s+)?[$€£]?\s?\d[\d,.]*\s*[kK]?\s*(?:[$€£]|usd|eur|dollars?|euros?|btc|eth)?\s*(?:/|a|an|per|every)\s*(?:day|week|month|hour)\b|\bturned\s+[$€£]?\s?\d[\d,.]*\s*[kK]?\s*(?:[$€£]|euros?|dollars?)?\s+into\s+[$€£]?\s?\d|\b(?:from|desde|von\s+zu|de\s+chez)\s+(?:home|casa|hause|vous|toi)\b|\bpassive\s+income\b|\bincome\s+from\s+home\b|\bwork\s+from\s+home\b|\bfinancial\s+freedom\b|\b(?:money|cash)\s+machine\b|\bmake\s+money\b|\bfree\s+money\b|\bdouble\s+your\s+(?:money|investment|bitcoin|crypto)\b|\binvest(?:ment)?\s+(?:platform|opportunit\w+|plan)\b|\btrading\s+(?:bot|signals?|platform)\b|\bforex\b|\bbinary\s+options?\b|\bbitcoin\b|\bbtc\b|\bcrypto\w*\b|\bethereum\b|\busdt\b|\bnft\b|\bminer\b|\bmining\s+(?:rig|pool|bot)\b|\bgana\s+dinero\b|\bgeld\s+verdienen\b|\bgagne[rz]?\s+de\s+l'argent\b|\bganhe\s+dinheiro\b|\bguadagna\w*\b|\bingresos\s+pasivos\b|\bpassives?\s+einkommen\b|\brevenus?\s+passifs?\b|\brenda\s+passiva\b|\breddito\s+passivo\b|\bzarabiaj\w*\b|\bverdien\s+geld\b`)
	// A price per time ("$20/month"): an income promised, or what a
	// plan costs. Only the first is an offer: it counts when the text
	// speaks of no charge, bill or plan of the user's own.
	reMoneyRate   = regexp.MustCompile(`(?i)[$€£]\s?\d[\d,.]*\s*[kK]?\s*(?:/|a|per)\s*(?:day|week|month|hour)\b|(?:[$€£]\s?\d[\d,.]*|\d[\d,.]*\s?(?:[$€£]|usd|eur|euros?|dollars?|z[łl]))\s*[kK]?\s*(?:/|a|an|per|pro|por|par|al|am|na|w|every)\s*(?:day|week|month|hour|tag|woche|monat|d[ií]a|semana|mes|jour|semaine|mois|dia|giorno|settimana|mese|dag|week|maand|dzie[ńn]|tydzie[ńn]|miesi[ąa]c)\b`)
	rePaidContext = regexp.MustCompile(`(?i)\b(?:charg\w*|bill(?:s|ed|ing)?|paid|pay(?:s|ing|ment\w*)?|subscri\w*|plan|price\w*|pricing|cost(?:s|ing)?|fee|fees|renew\w*|invoice\w*|refund\w*|receipt\w*|order\s+total|total|cobr\w*|pag(?:o|u[ée]|ado|ar|amento)\w*|suscrip\w*|assinatura|abbuch\w*|bezahl\w*|abo|abonnement\w*|rechnung\w*|factur\w*|pr[ée]lev\w*|addebit\w*|abbonament\w*|fattur\w*|betaal\w*|afgeschreven|abonnement|op[łl]at\w*|obci[ąa]\w*|subskrypc\w*)\b`)
	// A sales pitch: a price for something that is not the app, a discount
	// off, urgency.
	rePitch = regexp.MustCompile(`(?i)\bi\s+(?:sell|offer)\b|\bwe\s+(?:sell|offer)\s+(?:cheap|the\s+best|\d)|\bselling\s+(?:cheap|real|\d)|\bvendo\b|\bverkaufe\b|\bje\s+vends\b|\bsprzedam\b|\bik\s+verkoop\b|\bfor\s+only\s+[$€£]?\s?\d|\bonly\s+[$€£]\s?\d|\b\d{1,2}\s*%\s*off\b|\blimited\s+(?:slots|spots|offer|time\s+offer|stock)\b|\bgrab\s+(?:yours|it|one)\b|\b(?:act|order|buy|join|sign\s+up)\s+now\b|\bdon'?t\s+miss\s+(?:out|this)\b|\b(?:real|cheap|instant)\s+(?:followers|likes|subscribers|views)\b|\b\d[\d,.]*\s*[kK]?\s+(?:followers|likes|subscribers|views)\b|\bcheapest\b|\bwholesale\b|\bgiveaway\b|\bclick\s+(?:here|the\s+link|below)\b|\bhaz\s+clic\s+aqu[ií]\b|\bklicke?\s+hier\b|\bcliquez\s+ici\b|\bclique\s+aqui\b|\bclicca\s+qui\b|\bkliknij\s+tutaj\b|\bklik\s+hier\b|\bcheck\s+out\s+my\b|\bcheck\s+my\s+(?:channel|profile|page|site|website|shop|store|bio|offer|link\s+in)\b|\b(?:get|claim|win|receive)\s+(?:a\s+|an\s+|your\s+)?(?:free\s+)?[$€£]?\d*\s*(?:gift\s*card|voucher|prize)s?\b|\bclaim\s+(?:your|it|now)\b|\bcomplete\s+(?:the|a|this|our)\s+(?:form|survey|offer)\b|🔞|\bxxx\b|\bnudes?\b|\bexclusive\s+(?:pics|photos|content|videos)\b|\bhot\s+singles\b|\bonlyfans\b|\bdating\s+(?:site|app)\b|\bsubscribe\s+to\s+my\b|\bfollow\s+me\s+on\b|\bvisit\s+my\b|\bmy\s+(?:channel|profile|site|website|shop|store)\b|\b(?:mi|mein(?:em|en)?|ma|mon|meu|mio|mijn|m[óo]j)\s+(?:canal|kanal|cha[îi]ne|canale|kanaal|perfil|profil|profilo|profiel|tiktok|youtube|instagram)\b|\b(?:s[ií]gueme|folg(?:t)?\s+mir|suivez-moi|me\s+siga|seguitemi|seguite\s+il\s+mio|volg\s+me|obserwuj\s+mnie)\b|\bwin\s+(?:a|an|free|\$|€)\s*\w+|\bgana\s+(?:un|una)\b|\bgewinne\s+(?:ein|eine)\b|\bgagne[rz]?\s+(?:un|une)\b|\bfree\s+(?:coins|gold|diamonds|skins|credits|points|spins|lives|premium|gift\s*cards?|rewards?|currency)\b|\b(?:coins|credits|monedas|cr[ée]ditos|m[üu]nzen|pi[èe]ces|moedas|monete|munten|monety)\s+(?:gratis|gratuit\w*|kostenlos\w*|free|darmow\w*)\b|\b(?:unlimited|ilimitad[oa]s?|illimit[ée]e?s?|unbegrenzte?n?|ilimitad[oa]s?|illimitat[oaie]|onbeperkte?|nielimitowan\w*)\s+\w+|\w+\s+(?:ilimitad[oa]s|illimit[ée]e?s|illimitat[oaie])\b|\b(?:coin|gold|money|currency)\s+generator\b|\bmod\s+apk\b|\b(?:hack|cheat)s?\s+(?:tool|apk|download|generator)\b`)
)

// Malfunction evidence.
var (
	reBugWord        = regexp.MustCompile(`(?i)\bbug(?:s|gy|ged)?\b|\bglitch|\bfehlerhaft|\bbogue|\bbugado|\bfallo\b|\bfalla\b|\berror\b|\bexception\b|\bfail(?:s|ed)?\s+to\b|\berrors?\s+message|\bfehler(?:meldung)?\b|\berreur\b|\berro\b|\berrore\b|\bb[łl][ąa]d\b|\bfout(?:melding)?\b|\bpanic:|\btraceback\b|\bstack\s*trace\b`)
	reNothingHappens = regexp.MustCompile(`(?i)\bnothing\s+happens\b|\bdoes\s+nothing\b|\bdon'?t\s+do\s+anything\b|\bno\s+pasa\s+nada\b|\bno\s+hace\s+nada\b|\bpassiert\s+nichts\b|\brien\s+ne\s+se\s+passe\b|\bnada\s+acontece\b|\bn[aã]o\s+acontece\s+nada\b|\bnon\s+succede\s+(?:nulla|niente)\b|\ber\s+gebeurt\s+niets\b|\bnic\s+si[ęe]\s+nie\s+dzieje\b`)
	reNotWorking     = regexp.MustCompile(`(?i)\b(?:never|doesn'?t|does\s+not|don'?t|do\s+not|won'?t|will\s+not|isn'?t|is\s+not|stopped|no\s+longer|not)\s+(?:\w+\s+)?(?:come\s+back|comes\s+back|resume|work|load|show|open|save|sync|play|start|respond|appear|update|connect|launch|download|upload|send|arrive)`)
	reRestart        = regexp.MustCompile(`(?i)\b(?:have|had|need|needed|must)\s+to\s+(?:restart|reinstall|reboot|force\s+close|kill)\b|tengo\s+que\s+(?:reiniciar|reinstalar)|muss\s+(?:neu\s+starten|neu\s+installieren)|(?:dois|doit)\s+(?:red[ée]marrer|r[ée]installer)|dois\s+forcer|preciso\s+(?:reiniciar|reinstalar)|devo\s+(?:riavviare|reinstallare)`)
	// A slow app, not a fast one: the performance concept also holds
	// "smooth" and "fluid", which praise uses.
	reSlow = regexp.MustCompile(`(?i)\blag|\bslow|\bchoppy|\bstutter|\bjank|\bsluggish|\bframe\s*rate|\bfps\b|\blent[oa]?\b|\blentitud|\blenteur|\blentid|\bralentiz|\btirones|\bruckel|\blangsam|\bsaccad|\brame\b|\bengasg|\bscatti|\brallent|\btraag|\bwolno|\bwolne|\bzacina|(?:used\s+to\s+be|no\s+longer|not|isn'?t|wasn'?t)\s+(?:\w+\s+)?(?:smooth|fast|fluid)`)
	// The outcome differs from what was expected.
	reMismatch = regexp.MustCompile(`(?i)\binstead\s+of\b|\bstill\s+(?:shows?|says?|displays?|lists?|lets?|has|the\s+old|charg\w*|missing|empty|there|showing|saying)\b|\b(?:was|were|got|is|are|gets|keeps?\s+getting)\s+(?:declined|rejected|refused|denied)\b|\bwon'?t\s+let\s+me\b|\b(?:shows?|says?|displays?|lists?)\s+(?:the\s+|a\s+|me\s+)?(?:wrong|old|different|previous)\b|\bexpected\b.{0,60}\b(?:got|but|instead)\b|\bno\s+results?\b|\bnever\s+(?:starts?|triggers?|loads?|shows?|appears?|finish\w*|complet\w*|updat\w*|goes\s+through|went\s+through)\b|\b(?:keeps?|kept)\s+(?:resetting|restarting|reloading|disappearing|jumping|skipping|dropping|disconnecting|reverting|duplicating|buffering|saying|showing|asking|crashing|freezing|spinning|loading|logging\s+me\s+out)\b|\bgives?\s+up\s+after\b|\bdoesn'?t\s+(?:match|add\s+up|change|stick|go\s+through)\b|\bout\s+of\s+sync\b|\bby\s+itself\b|\bon\s+its\s+own\b|\beven\s+after\b|\btout\s+seule?\b|\bm[êe]me\s+apr[èe]s\b|\bpor\s+s[ií]\s+(?:sol[oa]|mism[oa])\b|\baun\s+despu[ée]s\b|\bincluso\s+despu[ée]s\b|\bvon\s+selbst\b|\bselbst\s+nach\b|\bsozinh[oa]\b|\bmesmo\s+depois\b|\bda\s+sol[oa]\b|\banche\s+dopo\b|\bvanzelf\b|\bzelfs\s+na\b|\bsam[ao]?\s+z\s+siebie\b|\bnawet\s+po\b|` +
		`\ben\s+(?:vez|lugar)\s+de\b|\bsigue\s+(?:mostrando|apareciendo|saliendo|diciendo)\b|\bno\s+(?:hace|hizo|hiciera)\s+caso\b|\b(?:fue|fueron|ha\s+sido)\s+rechazad[oa]s?\b|\bno\s+coincide\b|` +
		`\b(?:an)?statt\b|\bzeigt\s+(?:immer\s+)?noch\b|\babgelehnt\b|\bstimmt\s+nicht\b|` +
		`\bau\s+lieu\s+de\b|\baffiche\s+toujours\b|\brefus[ée]e?s?\b|\bne\s+correspond\s+pas\b|` +
		`\bem\s+vez\s+de\b|\bao\s+inv[ée]s\s+de\b|\bcontinua\s+(?:mostrando|a\s+mostrar|aparecendo)\b|\brecusad[oa]s?\b|\bn[ãa]o\s+bate\b|` +
		`\binvece\s+di\b|\bmostra\s+ancora\b|\bcontinua\s+a\s+mostrare\b|\brifiutat[oaie]\b|\bnon\s+corrispond\w*\b|` +
		`\bin\s+plaats\s+van\b|\btoont\s+nog\s+steeds\b|\bgeweigerd\b|` +
		`\bzamiast\b|\bnadal\s+pokazuje\b|\bodrzucon\w*\b`)
	// "It should X, but it Y": an expectation stated next to what happened.
	reExpectation = regexp.MustCompile(`(?i)\bshould\s+(?:be|say|show|have|work|start|display|match|run|list|go|count|stay|keep|open|load|update|arrive)\b|\b(?:it|this|that|they|which)\s+should(?:n'?t)?\b|\bis\s+supposed\s+to\b|\bdeber[ií]an?\b|\bsollte\b|\bm[üu]sste\b|\bdevrai(?:t|ent)\b|\bdeveria\b|\bdovrebbe(?:ro)?\b|\bzou\s+moeten\b|\bpowin(?:no|ien|na|ny)\b`)
	// "X, but when I ...": a contrast that introduces what went wrong.
	reContrast = regexp.MustCompile(`(?i)\bbut\s+(?:when|then|now|it|the|nothing|instead|after|i)\b|\bpero\s+(?:cuando|luego|ahora|no|en|al|yo)\b|\baber\s+(?:wenn|dann|jetzt|nicht|es|die|der|das|ich|beim)\b|\bmais\s+(?:quand|ensuite|maintenant|rien|il|elle|[çc]a|je|d[èe]s|apr[èe]s|le|la)\b|\bmas\s+(?:quando|depois|agora|n[ãa]o|nada|eu|a|o)\b|\bma\s+(?:quando|poi|adesso|ora|non|io|nella|nel|la|il)\b|\bmaar\s+(?:als|dan|nu|niet|het|ik)\b|\bale\s+(?:kiedy|gdy|teraz|nie|potem)\b`)
	// A regression: it worked before.
	reRegression = regexp.MustCompile(`(?i)\bsince\s+(?:the|this|last|your|updating|upgrading|i\s+updated|yesterday|version|v?\d)|\bafter\s+(?:the\s+|this\s+|your\s+|last\s+)?(?:update|updating|upgrad\w*|bumping)\b|\bused\s+to\s+work|\bwas\s+(?:working\s+)?fine\s+(?:before|until|last|yesterday|on)\b|\bworked\s+(?:fine|before|until|on)\b|\bwas\s+working\s+(?:fine|before|until|last)\b|\bdesde\s+(?:la|el|que|ayer|hace)\b|\bseit\s+(?:dem|der|gestern|version|v?\d)|\bdepuis\s+(?:la|le|hier|que)\b|\bdesde\s+(?:a|o|ontem)\b|\bdepois\s+(?:que\s+atualizei|da\s+atualiza)|\bda(?:l|lla|quando)\s+(?:aggiornamento|ultimo|ieri|versione)\b|\bsinds\s+(?:de|gisteren|versie)\b|\bod\s+(?:aktualizacji|wczoraj|wersji)\b`)
	// "Is it just me?": asking whether others see a malfunction.
	reOthersToo = regexp.MustCompile(`(?i)\bis\s+it\s+just\s+me\b|\banyone\s+else\b|\bam\s+i\s+the\s+only\b|\ba\s+alguien\s+m[áa]s\b|\b(?:le\s+pasa|les\s+pasa)\s+a\s+alguien\b|\bsoy\s+(?:el|la)\s+[úu]nic[oa]\b|\bnoch\s+jemand\b|\bbin\s+ich\s+(?:der|die)\s+einzige\b|\bquelqu'un\s+d'autre\b|\bje\s+suis\s+(?:le|la)\s+seul|\bmais\s+algu[ée]m\b|\bs[óo]\s+(?:comigo|eu)\b|\bqualcun\s+altro\b|\bsolo\s+a\s+me\b|\biemand\s+anders\b|\bligt\s+het\s+aan\s+mij\b|\bkto[śs]\s+jeszcze\b|\btylko\s+u\s+mnie\b`)
	// "Why does X happen?": asking the reason for a behaviour. (A "why
	// can't I" about something missing is a request: reMissing.)
	reWhyDoes = regexp.MustCompile(`(?i)\b(?:any\s+idea|no\s+idea|wonder(?:ing)?|know|explain)\s+why\b|\bwhy\s+(?:the|my|this|it|its|all|every|our)\b|\bczemu\s+\p{L}+|\bhow\s+come\b|\bcome\s+mai\b|\bc[óo]mo\s+es\s+que\b|\bwieso\b|\bweshalb\b|\bcomment\s+se\s+fait-il\b|\bhoe\s+komt\s+het\b|\bjak\s+to\s+mo[żz]liwe\b|\bwarum\s+\p{L}+|\bpourquoi\s+\p{L}+|\bperch[ée]\s+\p{L}+|\bwaarom\s+\p{L}+|\bdlaczego\s+\p{L}+|\bpor\s+qu[ée]\s+\p{L}+|\bwhy\s+(?:does|do|did|is|are|was|were|has|have|would|won'?t|doesn'?t|isn'?t|aren'?t|am\s+i|do\s+i|did\s+i)\b|\bpor\s+qu[ée]\s+(?:se|me|sale|aparece|no\s+(?:me|se|funciona|aparece|carga)|est[áa]|ya\s+no)\b|\bwarum\s+(?:wird|werden|ist|sind|geht|zeigt|st[üu]rzt|funktioniert|bekomme|kommt|l[äa]dt)\b|\bpourquoi\s+(?:est-ce\s+que|le|la|les|l'|mon|ma|mes|[çc]a|il|elle|je\s+(?:re[çc]ois|vois|dois))\b|\bpor\s+que\s+(?:o|a|os|as|meu|minha|est[áa]|aparece|n[ãa]o\s+(?:aparece|funciona|carrega|chega))\b|\bperch[ée]\s+(?:il|la|lo|le|l'|mi|si|[èe]|non\s+(?:funziona|arriva|carica|compare))\b|\bwaarom\s+(?:doet|is|werkt|toont|krijg|laadt)\b|\bdlaczego\s+(?:aplikacja|nie\s+(?:dzia[łl]a|dochodz|[łl]aduje)|ci[ąa]gle|znowu)\b`)
	// A malfunction reported as over.
	reResolved = regexp.MustCompile(`(?i)\b(?:fixed|solved|resolved|sorted\s+out)\s+(?:the|my|that|this|all|every|those|these)\b|\bno\s+more\s+(?:crash|lag|freez|bug|glitch|stutter)\w*|\bno\s+longer\s+(?:crash|lag|freez|stutter)\w*|\b(?:arreglaron|solucionaron|han\s+arreglado)\b|\bya\s+no\s+se\s+(?:cierra|cuelga)\b|\b(?:ist|sind|wurde|wurden)\s+(?:jetzt\s+)?behoben\b|\bst[üu]rzt\s+nicht\s+mehr\b|\bvous\s+avez\s+(?:corrig[ée]|r[ée]gl[ée])\b|\bne\s+plante\s+plus\b|\b(?:corrigiram|resolveram)\b|\bn[ãa]o\s+(?:trava|fecha)\s+mais\b|\bavete\s+(?:risolto|sistemato|corretto)\b|\bnon\s+si\s+(?:blocca|chiude)\s+pi[ùu]\b|\bis\s+(?:nu\s+)?opgelost\b|\bnaprawili[śs]cie\b`)
	// "Is this normal?": asking whether a behaviour is intended.
	reIsNormal = regexp.MustCompile(`(?i)\b(?:is\s+(?:this|that|it)\s+)?(?:normal|expected|intended)\s*\?|\bes\s+normal\b|\bist\s+das\s+(?:normal|so\s+gewollt)\b|\bc'est\s+normal\b|\bnormal\s*\?|\b[ée]\s+normal\b|\b[èe]\s+normale\b|\bis\s+dit\s+normaal\b|\bczy\s+to\s+normalne\b`)
	// "Every time": a repeated malfunction.
	reEveryTime = regexp.MustCompile(`(?i)\bevery\s+(?:single\s+)?time\b|\beach\s+time\b|\bcada\s+vez\b|\bjedes\s+mal\b|\bchaque\s+fois\b|\btoda\s+vez\b|\bogni\s+volta\b|\belke\s+keer\b|\bza\s+ka[żz]dym\s+razem\b`)
	// Asking the team to look into something.
	reWeakProblem  = regexp.MustCompile(`(?i)\bhelp\b|\bhilfe\b|\bayuda\b|\bajuda\b|\baiuto\b|\bissue|\bproblem|\bannoying|\bfrustrat|\bunacceptable|\bfix\b|\bfail|\bterrible|\bhorrible|\bawful|\bworse|\bworst\b|\buseless\b|\bproblema|\bnervig|\bprobl[eè]me|\bfrustrant|\bchato|\bfastidios|\barregl|\bbehebt|\bcorrig|\bvervelend|\birytuj|\bpomocy\b`)
	reCheckRequest = regexp.MustCompile(`(?i)\b(?:can|could)\s+(?:you|someone|somebody)\s+(?:please\s+)?(?:check|look\s+into|investigate|verify|fix|sort)\b|\bplease\s+(?:check|look\s+into|investigate|fix|sort\s+(?:it|this))\b|\bpueden\s+(?:revisar|verificar|mirar|arreglar)\b|\bpodr[ií]an\s+(?:revisar|verificar|arreglar)\b|\bk[öo]nn(?:t)?en\s+sie\s+(?:das\s+)?(?:pr[üu]fen|[üu]berpr[üu]fen|beheben)\b|\bk[öo]nnt\s+ihr\s+(?:das\s+)?(?:pr[üu]fen|[üu]berpr[üu]fen|beheben)\b|\bpouvez-vous\s+(?:v[ée]rifier|regarder|corriger)\b|\bpodem\s+(?:verificar|ver|corrigir)\b|\bpotete\s+(?:verificare|controllare|sistemare|correggere)\b|\bkunnen\s+jullie\s+(?:dit\s+)?(?:controleren|nakijken|oplossen)\b|\bmo[żz]ecie\s+(?:to\s+)?(?:sprawdzi[ćc]|naprawi[ćc])\b`)
)

// Harm evidence: what a malfunction did to the user. A report of harm
// is never a wish, a how-to question or praise, however it is phrased
// ("would love it if you fixed the crash", "how do I get my money back,
// it charged me twice", "great app, but it deleted my photos").
var (
	// Private data or access exposed to others.
	reExposure = regexp.MustCompile(`(?i)\b(?:is|are|was|were|got|gets|get|been|being)\s+(?:now\s+|being\s+|publicly\s+)?(?:exposed|leaked|leaking|hacked|compromised|breached)\b|\b(?:leaks?|leaked|leaking|exposes|exposed|shows|showed|displays?|logs|logged|sends|sent|stores|stored|saved)\s+(?:all\s+)?(?:my|our|users'?|customers'?|other\s+(?:users|people)'?s?|someone\s+else'?s|personal|private|passwords?|tokens?|secrets?|api\s+keys?|credentials?|card\s+numbers?)\b.{0,40}\b(?:in\s+(?:plain|clear)\s*text|publicly|to\s+(?:anyone|everyone|others|strangers))\b|\b(?:leaks?|leaked|leaking|exposes|exposed)\s+(?:my|our|users'?|customers'?|other\s+users'?|someone\s+else'?s|personal|private|passwords?|tokens?|secrets?|api\s+keys?|credentials?|card\s+numbers?)\b|\bhacked\s+(?:my|our|into)\b|\bdata\s+breach\b|\bunauthori[sz]ed\s+(?:access|login|log-?in|sign-?in|charges?|transactions?|payments?|purchases?|transfers?|use)\b|\bin\s+(?:plain|clear)\s*text\b|\bsomeone\s+else'?s\s+(?:account|orders?|data|messages|photos|details|address|card)\b|\bvisible\s+(?:to|for)\s+(?:anyone|anybody|everyone|everybody|others|other\s+(?:users|people)|strangers|the\s+public)\b|\b(?:anyone|anybody|everyone|everybody|strangers|other\s+(?:users|people))\s+can\s+(?:now\s+)?(?:see|read|view|open|access)\b|\bwithout\s+(?:unlocking|a\s+password|a\s+pin|logging\s+in|signing\s+in|authenticat\w*|my\s+(?:pin|password|fingerprint|passcode))\b|` +
		`\b(?:filtrad|expuest|hackead|vazad|invadid)[oa]s?\b|\bvisibles?\s+para\s+(?:todos|todo\s+el\s+mundo|cualquiera)\b|\bcualquiera\s+puede\s+ver\b|\b(?:geleakt|offengelegt|gehackt|gelekt)\b|\bf[üu]r\s+(?:alle|jeden)\s+sichtbar\b|\bjeder\s+kann\s+(?:\w+\s+)?sehen\b|\bpirat[ée]e?s?\b|\bdivulgu[ée]e?s?\b|\bvisibles?\s+(?:par|pour|[àa])\s+tous\b|\bn'importe\s+qui\s+peut\s+(?:voir|lire)\b|\bvis[íi]ve(?:l|is)\s+para\s+todos\b|\bqualquer\s+um\s+pode\s+ver\b|\btrapelat[oaie]\b|\bvisibil[ei]\s+a\s+tutti\b|\bchiunque\s+pu[òo]\s+vedere\b|\bzichtbaar\s+voor\s+iedereen\b|\biedereen\s+kan\s+(?:\w+\s+)?zien\b|\bwyciek\w*|\bzhakowan\w*|\bwidoczn\w+\s+dla\s+wszystkich\b`)
	// Someone else took over the account.
	reTakeover = regexp.MustCompile(`(?i)\b(?:someone|somebody|a\s+stranger|a\s+hacker)\s+(?:has\s+|had\s+)?(?:changed|reset|logged\s+into|logged\s+in\s+to|accessed|took\s+over|taken\s+over|used|hijacked|stole)\s+(?:my|our)\b|\balguien\s+(?:cambi[óo]|entr[óo]\s+en|accedi[óo]\s+a|us[óo])\s+mi\b|\bjemand\s+hat\s+(?:mein|meine|meinen|sich\s+in\s+mein)\b|\bquelqu'un\s+a\s+(?:chang[ée]|acc[ée]d[ée]|modifi[ée]|utilis[ée])\b|\balgu[ée]m\s+(?:mudou|entrou|acessou|usou)\b|\bqualcuno\s+ha\s+(?:cambiato|modificato|acceduto|usato)\b|\biemand\s+heeft\s+(?:mijn|in\s+mijn)\b|\bkto[śs]\s+(?:zmieni[łl]|zalogowa[łl]|u[żz]y[łl])\b`)
	// The app (not the user) destroyed the user's things.
	reDestroyed = regexp.MustCompile(`(?i)\b(?:it|app|update|game|sync|system|this)\s+(?:has\s+|just\s+|then\s+)?(?:deleted|erased|wiped|removed|lost|overwrote|overwritten)\s+(?:all\s+(?:of\s+)?)?(?:my|our|the)\b|\bborr[óo]\s+(?:todos?\s+|todas?\s+)?(?:mis|los|las)\b|\bhat\s+(?:alle\s+)?(?:meine|meinen|mein)\b.{0,40}\b(?:gel[öo]scht|entfernt|[üu]berschrieben)\b|\ba\s+(?:tout\s+)?(?:effac[ée]|supprim[ée]|[ée]cras[ée])\s+(?:tou(?:te)?s\s+)?(?:mes|mon|ma)\b|\bapagou\s+(?:todos?\s+|todas?\s+)?(?:os|as|meus|minhas)\b|\bha\s+(?:cancellato|eliminato)\s+(?:tutt[ie]\s+)?(?:i\s+miei|le\s+mie|il\s+mio|la\s+mia)\b|\bheeft\s+(?:al\s+)?mijn\b.{0,40}\bverwijderd\b|\busun[ąa][łl](?:a|o)?\s+(?:wszystkie\s+)?moje\b`)
	// Money sent to the wrong party, or taken without consent.
	reMisdirected = regexp.MustCompile(`(?i)\bwrong\s+(?:person|account|recipient|payee|iban|number)\b|\b(?:persona|cuenta)\s+equivocada\b|\bfalsche[nr]?\s+(?:person|konto|empf[äa]nger)\b|\bmauvais\s+(?:destinataire|compte|b[ée]n[ée]ficiaire)\b|\b(?:pessoa|conta)\s+errada\b|\bdestinat[áa]rio\s+errado\b|\b(?:persona|conto|destinatario)\s+sbagliat[oa]\b|\bverkeerde\s+(?:persoon|rekening|ontvanger)\b|\b(?:z[łl]ego|niew[łl]a[śs]ciwego)\s+(?:odbiorc\w*|konta)\b`)
	// More than one payment for one thing: "two payments of 31.40", "zwei
	// Abbuchungen", or a refund asked of the extra one.
	reMultipleCharges = regexp.MustCompile(`(?i)\b(?:two|three|2|3|dos|tres|zwei|drei|deux|trois|duas|dois|tr[êe]s|due|tre|twee|drie|dwa|dwie|trzy)\s+(?:\p{L}+\s+)?(?:payments?|charges?|transactions?|debits?|pagos|cobros|cargos|zahlungen|abbuchungen|buchungen|paiements|pr[ée]l[èe]vements|d[ée]bits|pagamentos|cobran[çc]as|pagamenti|addebiti|betalingen|afschrijvingen|p[łl]atno[śs]ci|obci[ąa][żz]enia)\b|\b(?:refund|reimburse|return|cancel|reverse)\s+(?:me\s+)?(?:the|one|my)\s+(?:extra|second|duplicate|double|other|additional)\s+(?:payment|charge|transaction|debit)\b|\b(?:charged|billed|paid|debited)\s+(?:me\s+)?(?:twice|two\s+times|double)\b`)
	reUnwantedCharge  = regexp.MustCompile(`(?i)\b(?:charged|billed|debited|deducted|took|taken)\b.{0,40}\b(?:after\s+(?:i\s+)?(?:cancel\w*|unsubscrib\w*)|without\s+(?:my\s+)?(?:consent|permission|authori[sz]ation|asking))\b|\b(?:cancel(?:l)?ed|unsubscribed|terminated)\b.{0,60}\b(?:(?:was|were|got|been|being|still|am|is|keeps?)\s+(?:\w+\s+)?(?:charged|billed|debited)|(?:charged|billed|debited|renewed)\s+(?:me\s+)?again)\b|\b(?:cancel[ée]|di\s+de\s+baja)\b.{0,60}\b(?:me\s+(?:volvieron\s+a\s+|siguen\s+)?cobr(?:aron|ando|an)|cobrad[oa])\b|\bgek[üu]ndigt\b.{0,60}\b(?:wieder|trotzdem|erneut|noch)\s+(?:\w+\s+)?abgebucht\b|\b(?:r[ée]sili[ée]|annul[ée])\b.{0,60}\b(?:encore|quand\s+m[êe]me|[àa]\s+nouveau)\s+(?:\w+\s+)?(?:pr[ée]lev[ée]|d[ée]bit[ée]|factur[ée])\b|\bcancelei\b.{0,60}\b(?:cobrad[oa]|cobraram)\b|\b(?:disdetto|annullato|disattivato)\b.{0,60}\baddebitat[oaie]\b`)
	// Two amounts of money next to each other: what was expected and what
	// was taken.
	reAmount = regexp.MustCompile(`[$€£]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:[$€£]|usd|eur|gbp|z[łl])`)
	// A harm named only as something that does not, or might, happen
	// ("so I don't lose my notes", "never crashes", "in case it freezes").
	reHypothetical = regexp.MustCompile(`(?i)\b(?:don'?t|doesn'?t|do\s+not|does\s+not|won'?t|will\s+not|never|without|in\s+case|if|avoid\w*|prevent\w*|not|no|zero|hasn'?t|haven'?t|nunca|sin|si|ohne|nie|falls|wenn|sans|jamais|sem|se|mai|senza|zonder|nooit|als|bez|je[śs]li)\s+(?:\w+\s+){0,2}(?:crash\w*|freez\w*|froze\w*|hang\w*|los(?:e|es|ing|t)|wip\w*|eras\w*|delet\w*|disappear\w*|vanish\w*|hack\w*|leak\w*|expos\w*|lock\w*|black|blank|cierr\w*|perd\w*|abst[üu]rz\w*|plant\w*|trav\w*|bloc\w*|chiud\w*)`)
)

// Request evidence, beyond the wish phrases of reFeature.
var (
	reFeature = regexp.MustCompile(`(?i)\b(?:einbauen|hinzuf[üu]gen|erm[öo]glichen)\b|\bajoutez\b|\bajouter\s+(?:un|une|le|la|des)\b|\bagreguen\b|\ba[ñn]adir\b|\badicionar\b|\bwould\s+love\b|\bit'?d\s+be\s+(?:\w+\s+)?(?:nice|great|cool|awesome|good|helpful|useful|handy)\b|\bwould\s+be\s+(?:\w+\s+)?(?:nice|great|cool|awesome|helpful|useful|handy)\b|\b(?:you\s+should|pls|plz)\s+(?:add|make|implement|include|bring)\b|\bcan\s+(?:we|you)\s+(?:get|have)\s+(?:a|an|some|more|the\s+option)\b|\bhope\s+you\s+(?:will\s+|can\s+)?add\b|\bi\s+want\s+(?:a|an)\s+\w+\s+(?:mode|option|button|setting|feature)\b|\bmissing\s+feature\b|\bplease\s+(?:implement|include|consider|support|allow)\b|\badd\s+(?:support\s+for|more)\b|\bi'?d\s+(?:really\s+)?(?:love|like|appreciate)\b|\bwould\s+(?:really\s+|very\s+much\s+|greatly\s+)?appreciate\b|\bi\s+would\s+(?:really\s+)?like\b|\bplease\s+add\b|\b(?:can|could|would)\s+(?:you|we)\s+(?:please\s+)?(?:add|make|include|consider|get|have)\b|\bi\s+wish\b|\bwish\s+(?:there|you|it)\b|\bfeature\s+request|\bsuggestion\b|\badd\s+(?:an?\s+)?(?:option|setting|toggle|mode|way)\b|\b(?:option|ability)\s+to\b|\ballow\s+(?:me|us|users)\s+to\b|\bplease\s+(?:make|bring|let)\b|\bwhy\s+(?:not|isn'?t\s+there)\b|` +
		`ser[ií]a\s+(?:\w+\s+)?(?:genial|bueno|buena|[óo]p?timo|incre[ií]ble|[úu]til|legal|bom|boa|bacana|[óo]tima|ideal|estupendo|pr[áa]ctico)|me\s+gustar[ií]a|estar[ií]a\s+bien|a[ñn]adan|agreguen|ojal[áa]|podr[ií]an\s+(?:a[ñn]adir|agregar|incluir|poner)|` +
		`w[äa]re\s+(?:\w+\s+)?(?:sch[öo]n|toll|cool|super|gut|praktisch|hilfreich|n[üu]tzlich|klasse)|bitte\s+f[üu]gt|w[üu]nsche\s+mir|k[öo]nntet\s+ihr|ich\s+h[äa]tte\s+gerne?|ich\s+w[üu]rde\s+mir\b|` +
		`ce\s+serait\s+(?:\w+\s+)?(?:bien|g[ée]nial|top|super|pratique|utile)|j'aimerais|je\s+voudrais|pourriez-vous\s+ajouter|il\s+faudrait|` +
		`gostaria|adicionem|poderiam\s+adicionar|` +
		`sarebbe\s+(?:\w+\s+)?(?:bello|utile|fantastico|bellissimo|comodo|ottimo|possibile\s+aggiung\w*)|mi\s+piacerebbe|vorrei|aggiungete|potreste\s+aggiungere|` +
		`zou\s+(?:\w+\s+)?(?:fijn|handig|mooi|leuk|geweldig|top)\s+zijn|ik\s+zou\s+graag|graag\s+(?:\w+\s+)?toevoegen|kunnen\s+jullie\s+(?:\w+\s+){0,3}toevoegen|voeg\s+(?:\w+\s+){0,3}toe|` +
		`by[łl]oby\s+(?:\w+\s+)?(?:fajnie|super|dobrze|mi[łl]o|przydatne|[śs]wietnie)|chcia[łl](?:a|)bym|prosz[ęe]\s+(?:o\s+)?doda[ćc]|dodajcie|mo[żz]ecie\s+doda[ćc]`)
	// "I wish I had known", "I wish we had done it sooner": a wish about
	// the past, not about the product.
	reWishPast = regexp.MustCompile(`(?i)\bi\s+wish\s+(?:i|we)\s+(?:had|'d)\b`)
	// A complaint about something missing: "why can't I choose", "there
	// is no option to". A request when nothing is reported broken.
	reMissing = regexp.MustCompile(`(?i)\bwhy\s+(?:can'?t|cannot|can\s+not|isn'?t\s+it\s+possible\s+to)\s+(?:i|we|you|one)\b|\bwhy\s+(?:is\s+there\s+no|isn'?t\s+there\s+an?|is\s+there\s+still\s+no|do\s+you\s+not\s+(?:have|offer|support))\b|\b(?:there'?s|there\s+is|there\s+are|has|have)\s+no\s+(?:\w+\s+){0,3}(?:option|way|setting|button|feature|support|toggle|possibility)\b|\bno\s+(?:way|option)\s+to\b|\b(?:doesn'?t|does\s+not|don'?t|do\s+not)\s+(?:even\s+)?(?:have|offer|support)\s+(?:an?\s+)?(?:option|way|setting|feature|support)\b|` +
		`\bpor\s+qu[ée]\s+no\s+(?:puedo|se\s+puede|hay|podemos)\b|\bno\s+hay\s+(?:\w+\s+)?(?:forma|manera|opci[óo]n|bot[óo]n)\s+(?:de|para)\b|` +
		`\bwarum\s+kann\s+(?:ich|man)\b.{0,40}\bnicht\b|\bwarum\s+gibt\s+es\s+(?:kein|keine)\b|\bes\s+gibt\s+(?:keine|keinen|kein)\s+(?:m[öo]glichkeit|option|einstellung|knopf|funktion)\b|` +
		`\bpourquoi\s+(?:je\s+ne\s+peux|on\s+ne\s+peut|ne\s+peut-on|ne\s+puis-je|n'y\s+a-t-il)\b|\bil\s+n'y\s+a\s+(?:pas|aucune?)\s+(?:de\s+)?(?:moyen|option|possibilit[ée]|bouton|r[ée]glage)\b|` +
		`\bpor\s+que\s+(?:eu\s+)?n[ãa]o\s+(?:posso|d[áa]|tem|h[áa])\b|\bn[ãa]o\s+(?:h[áa]|tem)\s+(?:\w+\s+)?(?:como|op[çc][ãa]o|forma|maneira|bot[ãa]o)\b|` +
		`\bperch[ée]\s+non\s+(?:posso|si\s+pu[òo]|c'[èe])\b|\bnon\s+c'[èe]\s+(?:un\s+|una\s+|l'|la\s+|il\s+)?(?:modo|opzione|possibilit[àa]|pulsante|impostazione)\b|` +
		`\bwaarom\s+kan\s+ik\b.{0,40}\b(?:niet|geen)\b|\ber\s+is\s+geen\s+(?:optie|manier|knop|instelling)\b|\bgeen\s+(?:optie|manier|mogelijkheid|knop|instelling)\s+(?:\w+\s+){0,2}om\b|` +
		`\bdlaczego\s+nie\s+(?:mog[ęe]|mo[żz]na)\b|\bnie\s+ma\s+(?:opcji|mo[żz]liwo[śs]ci|sposobu|przycisku)\b|\bbrakuje\b|\bi\s+miss\s+(?:a|an|the\s+(?:option|ability|possibility))\b|\bmissing\s+(?:an?\s+)?(?:option|feature|way|setting)\b|\becho\s+(?:de\s+menos|en\s+falta)\b|\bfalta\s+(?:una?|la|el)\s+(?:opci[óo]n|funci[óo]n|modo|forma|manera)\b|\bmir\s+fehlt\b|\bich\s+vermisse\b|\bes\s+fehlt\s+(?:eine?|die|der)\b|\bil\s+(?:me\s+|nous\s+)?manque\s+(?:un|une|la|le)\b|\bsinto\s+falta\b|\bfalta\s+(?:uma?|a|o)\s+(?:op[çc][ãa]o|fun[çc][ãa]o|modo|forma|maneira)\b|\bmi\s+manca\b|\bmanca\s+(?:un|una|la|il)\s+(?:opzione|funzione|modalit[àa]|modo)\b|\bik\s+mis\b`)
	reFeatureShort = regexp.MustCompile(`(?i)^\s*(?:[\p{L}\d'-]+\s+){0,5}[\p{L}\d'-]+\s+(?:please|pls|plz|por\s+favor|bitte|s'il\s+vous\s+pla[iî]t|svp|per\s+favore|alsjeblieft|prosz[ęe])\s*[!.]*\s*$`)
)

// Question evidence: how-to and procedure questions.
var (
	reSupport = regexp.MustCompile(`(?i)\bhow\s+(?:do|can|should|would)\s+(?:i|we|you)\b|\bhow\s+to\b|\bwhere\s+(?:can|do|should)\s+(?:i|we)\b|\bwhere\s+is\b|\bis\s+there\s+(?:a|an|any|some|something)\s+(?:\w+\s+)?(?:way|setting|option|switch|button|place|limit|fee)\b|\bis\s+there\s+something\b|\bis\s+it\s+possible\b|\bcan\s+i\s+\w+|\bwhat\s+(?:happens|should\s+i|do\s+i)\b|\bdo\s+i\s+(?:need|have)\s+to\b|\bdoes\s+(?:it|this)\s+(?:cost|include|work\s+with)\b|\bam\s+i\s+missing\b|\b(?:which|what)\s+(?:\w+\s+){0,2}(?:do|does|can|will)\s+you\s+(?:accept|support|offer|charge|ship|deliver)\b|\bis\s+(?:\w+\s+){0,4}supposed\s+to\b.{0,80}\?|` +
		`c[óo]mo\s+(?:puedo|podemos|hago|se|recupero|cambio)|¿\s*(?:puedo|se\s+puede|hay\s+que|tengo\s+que)\b|(?:^|[.!?]\s+)kann\s+(?:ich|man)\b|(?:^|[.!?]\s+)puis-je\b|\best-ce\s+que\s+je\s+peux\b|(?:^|[.!?]\s+)(?:posso|[ée]\s+poss[íi]vel)\b|(?:^|[.!?]\s+)kan\s+ik\b|\bczy\s+mog[ęe]\b|d[óo]nde\s+(?:puedo|est[áa])|es\s+posible|hay\s+(?:alguna\s+)?(?:forma|manera)|tengo\s+que\s+\w+\s+(?:algo|alguna)|` +
		`wie\s+(?:kann|k[öo]nnen|mache|funktioniert|bekomme)|wo\s+finde|gibt\s+es\s+eine\s+m[öo]glichkeit|muss\s+ich\b.{0,60}\?|` +
		`comment\s+(?:puis|faire|je|on)|o[ùu]\s+(?:puis|trouver|est)|est-il\s+possible|dois-je|faut-il|` +
		`como\s+(?:fa[çc]o|posso|consigo|podemos)|onde\s+(?:posso|fica|est[áa])|[ée]\s+poss[íi]vel|preciso\s+\w+\b.{0,40}\?|` +
		`come\s+(?:posso|faccio|si)|dove\s+(?:posso|trovo|[èe])|[èe]\s+possibile|` +
		`hoe\s+(?:kan|moet)\s+ik|waar\s+(?:kan|vind)\s+ik|is\s+het\s+mogelijk|` +
		`jak\s+(?:mog[ęe]|mo[żz]na|zmieni[ćc])|gdzie\s+(?:mog[ęe]|znajd[ęe])|czy\s+(?:mo[żz]na|da\s+si[ęe])`)
	reQuestionMark = regexp.MustCompile(`\?`)
)

// Praise evidence beyond the positive concept.
var (
	rePositive   = regexp.MustCompile(`(?i)\bgood\b|\bnice\b|\bcool\b|\bgreat\b|\blovely\b|\bgood\s+job|\bthank\s+you\b|\bthanks\b|[⭐🌟😍❤♥👍🔥💯🙌👏]`)
	rePraiseMark = regexp.MustCompile(`(?i)\b10\s*/\s*10\b|\b5\s*/\s*5\b|\b(?:5|five)\s+stars?\b|\bgreat\s+(?:work|job)\b|\bwell\s+done\b|\bkeep\s+(?:it\s+up|up\s+the)\b|\bno\s+regrets\b|\b(?:highly\s+)?recommend\b|\bthank\s+you\b|\bkudos\b|\bjust\s+works\b|\bmuchas\s+gracias\b|\bbuen\s+trabajo\b|\bvielen\s+dank\b|\bweiter\s+so\b|\bmerci\s+beaucoup\b|\bbravo\b|\bmuito\s+obrigad[oa]\b|\bparab[ée]ns\b|\bcomplimenti\b|\bgrazie\s+mille\b|\bgoed\s+gedaan\b|\bdzi[ęe]kuj[ęe]\b|\b[śs]wietna\s+robota\b`)
)

// evidence is the weighted evidence for one category, with its cues.
type evidence struct {
	score float64
	cues  []string
}

func (e *evidence) add(w float64, format string, args ...any) {
	e.score += w
	e.cues = append(e.cues, fmt.Sprintf("%s (+%.2g)", fmt.Sprintf(format, args...), w))
}

// categorize weighs the evidence documented at the top of this file and
// returns the category, a confidence and the cues that decided it.
func categorize(it Item) (string, float64, []string) {
	// The category shows in the prose: the first 4 KB and the last 1 KB
	// (the facts are read from a wider window by Classify).
	// A sentence pasted again and again counts once.
	text := distinctSentences(squeezeSpaces(boundText(it.Text, 4<<10, 1<<10)))
	lower := strings.ToLower(text)
	a := analyze(text)
	has := func(c string) bool { return a.bag["~"+c] > 0 }
	rating := -1.0
	if it.Rating != nil {
		rating = *it.Rating
	}

	spam := spamEvidence(text)

	var bug evidence
	strong := 0
	for _, c := range []string{"crash", "freeze", "blank_screen", "broken", "not_received"} {
		if c == "broken" && has(c) && brokenOnlyAsked(text) {
			bug.add(0.5, "bug: asks whether broken")
			continue
		}
		if has(c) {
			strong++
			bug.add(2, "bug: %s", c)
		}
	}
	if has("performance") {
		if m := reSlow.FindString(text); m != "" {
			strong++
			bug.add(2, "bug: slow %q", strings.ToLower(m))
		}
	}
	if has("data_loss") && holdsData(has) {
		strong++
		bug.add(2, "bug: data loss")
	}
	if has("charge") && (has("duplicate") || has("wrong") || has("not_received")) {
		strong++
		bug.add(2, "bug: wrong charge")
	}
	harm := harmEvidence(text, has)
	for _, h := range harm {
		if !strings.HasPrefix(h, "crash") && !strings.HasPrefix(h, "freeze") && !strings.HasPrefix(h, "blank_screen") && !strings.HasPrefix(h, "data loss") && !strings.HasPrefix(h, "wrong charge") {
			strong++
			bug.add(2, "bug: harm, %s", h)
		}
	}
	for _, re := range []*regexp.Regexp{reBugWord, reNotWorking, reRestart, reNothingHappens, reWillNotWork} {
		if m := re.FindString(text); m != "" {
			strong++
			bug.add(2, "bug: %q", strings.ToLower(m))
		}
	}
	for i, m := range uniqueLower(reMismatch.FindAllString(text, -1)) {
		if i == 2 {
			break
		}
		bug.add(1.5, "bug: unexpected outcome %q", m)
	}
	if m := reExpectation.FindString(text); m != "" {
		bug.add(0.75, "bug: expectation %q", strings.ToLower(m))
	}
	if m := reContrast.FindString(text); m != "" {
		bug.add(0.75, "bug: contrast %q", strings.ToLower(m))
	}
	regression := reRegression.FindString(text)
	if regression == "" {
		regression = findAnchored(reRegressionAfter, text, lower, anchorsRegressionAfter)
	}
	if regression != "" {
		bug.add(1.5, "bug: regression %q", strings.ToLower(regression))
	}
	nowShows := findAnchored(reNowShows, text, lower, anchorsNowShows)
	if nowShows != "" {
		bug.add(0.75, "bug: changed state %q", strings.ToLower(nowShows))
	}
	if m := findAnchored(reRetried, text, lower, anchorsRetried); m != "" {
		bug.add(1, "bug: tried again and again %q", strings.ToLower(m))
	}
	if m := findAnchored(reHappenedAgain, text, lower, anchorsHappenedAgain); m != "" {
		bug.add(0.75, "bug: happened again %q", strings.ToLower(m))
	}
	// "Can I get it back?" asks for what a malfunction took, when the
	// text says something was lost or changed.
	if m := findAnchored(reRecover, text, lower, anchorsRecover); m != "" && (has("data_loss") || regression != "" || nowShows != "" || reMismatch.MatchString(text)) {
		bug.add(1, "bug: asks to get back %q", strings.ToLower(m))
	}
	if m := reOthersToo.FindString(text); m != "" {
		bug.add(1, "bug: others too %q", strings.ToLower(m))
	}
	// "Why can't I ..." is a missing thing (request), not a behaviour.
	missingLoc := missingIndex(text)
	if loc := reWhyDoes.FindStringIndex(text); loc != nil {
		if ml := missingLoc; ml == nil || loc[1] <= ml[0] || loc[0] >= ml[1] {
			bug.add(1.5, "bug: asks why %q", strings.ToLower(text[loc[0]:loc[1]]))
		}
	}
	if m := reIsNormal.FindString(text); m != "" {
		bug.add(1, "bug: asks if normal %q", strings.ToLower(m))
	}
	if m := reEveryTime.FindString(text); m != "" {
		bug.add(0.5, "bug: repeated %q", strings.ToLower(m))
	}
	check := reCheckRequest.FindString(text)
	if check == "" {
		check = findAnchored(reFixAsked, text, lower, anchorsFixAsked)
	}
	if check != "" {
		bug.add(1, "bug: asks to check %q", strings.ToLower(check))
	}
	missing := ""
	if loc := missingLoc; loc != nil {
		missing = text[loc[0]:loc[1]]
	}
	weak := 0
	// "Why can't I choose X" is a wish, not an inability: its "can't"
	// is no evidence of a malfunction.
	if (has("unable") && missing == "") || has("wrong") || (has("error") && !reBugWord.MatchString(text)) {
		weak++
		bug.add(1, "problem: unable/wrong/error")
	}
	weakWord := reWeakProblem.FindString(text)
	if weakWord == "" {
		weakWord = findAnchored(reUseless, text, lower, anchorsUseless)
	}
	if m := weakWord; m != "" {
		weak++
		bug.add(0.5, "problem: %q", strings.ToLower(m))
	}
	if rating >= 0 && rating <= 2 {
		bug.add(0.5, "problem: rating %g", rating)
	}
	if metaValue(it.Metadata.Device) != "" && metaValue(it.Metadata.AppVersion) != "" {
		if len(it.Steps) > 0 || len(ExtractSteps(text)) > 0 {
			bug.add(0.5, "bug: device, version and steps")
		} else {
			bug.add(0.25, "bug: device and version")
		}
	}

	// "The update fixed the crash", "no more lag": a malfunction that is
	// over, which praise mentions.
	if m := reResolved.FindString(text); m != "" && bug.score > 0 && (rating >= 4 || a.bag["~feedback_positive"] > 0) {
		bug.score *= 0.3
		bug.cues = append(bug.cues, fmt.Sprintf("bug: reported as resolved %q (x0.3)", strings.ToLower(m)))
		harm = nil
	}
	// "That was my fault, not the app": a slip the user takes on, told
	// beside praise, is no malfunction (harm still is).
	if len(harm) == 0 && bug.score > 0 && (rating >= 4 || a.bag["~feedback_positive"] > 0) {
		if m := findAnchored(reExonerated, text, lower, anchorsExonerated); m != "" {
			bug.score *= 0.3
			bug.cues = append(bug.cues, fmt.Sprintf("bug: the user's own slip %q (x0.3)", strings.ToLower(m)))
		}
	}

	var req evidence
	feature := reFeature.FindString(text)
	if feature != "" && reWishPast.MatchString(text) && strings.HasPrefix(strings.ToLower(feature), "i wish") {
		feature = "" // a wish about the past
	}
	if feature == "" {
		feature = findAnchored(reFeatureMore, text, lower, anchorsFeatureMore)
	}
	supports := uniqueLower(supportMatches(text))
	if feature != "" && len(supports) > 0 && goalOnly(reFeature.FindAllString(text, -1), text) {
		// "How do I export my runs? I'd like to share them": the wish
		// is what the question is for.
		feature = ""
	}
	if feature != "" {
		req.add(3, "feature: %q", strings.ToLower(feature))
		if all := uniqueLower(reFeature.FindAllString(text, -1)); len(all) > 1 {
			req.add(0.5, "feature: %d wishes", len(all))
		}
	}
	if missing != "" {
		req.add(2.5, "feature: missing %q", strings.ToLower(missing))
	}
	if feature == "" && weak == 0 && reFeatureShort.MatchString(text) {
		// "Dark mode please!": a short thing asked for, nothing broken.
		req.add(3, "feature: short request %q", strings.TrimSpace(text))
	}

	var sup evidence
	for i, m := range supports {
		w := 2.5
		if i > 0 {
			w = 1
		}
		sup.add(w, "support: %q", m)
	}
	if strings.Contains(lower, "?") && sup.score == 0 {
		sup.add(0.5, "support: a question")
	}

	var praise evidence
	// Praise is the author's own: ratings given to someone else and
	// quoted words do not count.
	ptext, pbag := text, a.bag
	if pt := praiseText(text, lower); pt != text {
		ptext, pbag = pt, analyze(pt).bag
	}
	positive := pbag["~feedback_positive"] + len(rePositive.FindAllString(ptext, -1))
	if positive > 0 {
		praise.add(min(3, 0.8*float64(positive)), "praise: %d positive words", positive)
	}
	for _, m := range uniqueLower(rePraiseMark.FindAllString(ptext, -1)) {
		praise.add(1, "praise: %q", m)
	}
	switch {
	case rating >= 5:
		praise.add(1.5, "praise: rating %g", rating)
	case rating >= 4:
		praise.add(1, "praise: rating %g", rating)
	}

	var cues []string
	decide := func(cat string, conf float64, es ...evidence) (string, float64, []string) {
		for _, e := range es {
			cues = append(cues, e.cues...)
		}
		return cat, clamp01(conf), cues
	}
	margin := func(x, y float64) float64 { return 0.55 + 0.08*(x-y) }

	// Spam first: it often carries a 5-star rating and praise. A real
	// report with a link (a screenshot) is not spam unless the link comes
	// with more.
	// Two different kinds of spam signal with nothing to report are
	// enough ("visit my channel for free coins").
	// Harm done to the writer outranks a pitch: a spammer's text that
	// also says the app took money or data is seen by a person.
	if (spam.score >= 2.5 && !(strong > 0 && spam.score < 4)) || (spam.score >= 2 && len(spam.cues) >= 2 && bug.score < 1 && req.score == 0 && sup.score < 2.5) {
		own := ownHarm(text)
		if len(own) == 0 {
			return decide(CategorySpam, 0.55+spam.score/10, spam)
		}
		harm = own
	}
	if spam.score > 0 {
		cues = append(cues, spam.cues...)
	}
	// Harm a person must see: whatever else the text says (a wish to
	// fix it, a question how to undo it, praise around it), it is a bug.
	if len(harm) > 0 {
		cues = append(cues, "bug: harm outweighs "+strongestOther(req.score, sup.score, praise.score))
		return decide(CategoryBug, margin(bug.score, max(req.score, sup.score, praise.score))+0.2, bug, req, sup, praise)
	}
	switch {
	case req.score >= 2.5 && req.score >= bug.score:
		return decide(CategoryFeature, margin(req.score, bug.score)+0.1, req, bug)
	case bug.score >= 2 && bug.score > sup.score && (strong > 0 || bug.score >= praise.score):
		return decide(CategoryBug, margin(bug.score, max(sup.score, praise.score))+0.1, bug, sup)
	case sup.score >= 2 && sup.score >= bug.score:
		return decide(CategorySupport, margin(sup.score, bug.score)+0.1, sup, bug)
	case praise.score >= 1 && praise.score > bug.score:
		return decide(CategoryPraise, margin(praise.score, bug.score)+0.05, praise, bug)
	case bug.score >= 1:
		return decide(CategoryBug, 0.5, bug, sup, praise)
	case sup.score > 0:
		return decide(CategorySupport, 0.5, sup, bug)
	case praise.score > 0 && (rating >= 4 || !reportShaped(it, text)):
		return decide(CategoryPraise, 0.5, praise, bug)
	}
	cues = append(cues, bug.cues...)
	cues = append(cues, "no cue: treated as a bug so that it is asked for details")
	return CategoryBug, 0.4, cues
}

// reportShaped reports whether an item reads as an account of something
// that happened rather than a remark: it carries the device or the app
// version, or runs to several sentences. One kind word in such an item
// ("it came on time, nice") is no praise.
func reportShaped(it Item, text string) bool {
	if metaValue(it.Metadata.Device) != "" || metaValue(it.Metadata.AppVersion) != "" {
		return true
	}
	return len(sentences(text)) >= 3
}

// spamEvidence weighs links, contacts, money offers and pitches. A link
// alone is weak (reports link screenshots); what makes spam is a link or a
// contact together with an offer.
func spamEvidence(text string) evidence {
	var e evidence
	if m := reObfuscatedURL.FindString(text); m != "" {
		// Brackets and defanged schemes are written to slip past link
		// filters; a spelt-out "dot" is sometimes only an e-mail address.
		w := 2.5
		if !strings.ContainsAny(m, "[({:") {
			w = 2
		}
		e.add(w, "spam: obfuscated link %q", m)
	}
	if m := reURL.FindString(text); m != "" && !reEvidenceURL.MatchString(text) && !reEvidenceWord.MatchString(text) {
		e.add(1, "spam: link %q", m)
	}
	if m := rePhone.FindString(text); m != "" {
		e.add(1, "spam: phone number %q", m)
	}
	for i, m := range uniqueLower(reContact.FindAllString(text, -1)) {
		if i == 2 {
			break
		}
		e.add(1, "spam: contact %q", m)
	}
	if m := reFreeAmount.FindString(text); m != "" {
		e.add(1.5, "spam: free amount %q", m)
	}
	if m := rePromoCode.FindString(text); m != "" {
		e.add(1, "spam: code %q", m)
	}
	for i, m := range uniqueLower(reMoneyOffer.FindAllString(text, -1)) {
		if i == 3 {
			break
		}
		e.add(1, "spam: money offer %q", m)
	}
	if !rePaidContext.MatchString(text) {
		for i, m := range uniqueLower(reMoneyRate.FindAllString(text, -1)) {
			if i == 3 {
				break
			}
			e.add(1, "spam: money offer %q", m)
		}
	}
	for i, m := range uniqueLower(rePitch.FindAllString(text, -1)) {
		if i == 3 {
			break
		}
		e.add(1, "spam: pitch %q", m)
	}
	if e.score > 0 && capsRatio(text) > 0.5 {
		e.add(0.5, "spam: shouting")
	}
	return e
}

func strongestOther(req, sup, praise float64) string {
	switch {
	case req >= sup && req >= praise && req > 0:
		return "a request"
	case sup >= praise && sup > 0:
		return "a question"
	case praise > 0:
		return "praise"
	}
	return "nothing else"
}

// harmEvidence lists the harms a text reports: a crash, a freeze, a blank
// screen, lost or destroyed data, money taken wrongly, an account locked
// or taken over, private data exposed, an app that cannot be used. A harm
// named only as what does not or might happen ("so I never lose my
// notes") is none.
func harmEvidence(text string, has func(string) bool) []string {
	var out []string
	// A harm named in a sentence that only says it might happen does
	// not count; the other sentences' harms still do.
	stated, hypothetical := statedSentences(text)
	hasStated := has
	if hypothetical {
		sa := analyze(stated)
		hasStated = func(c string) bool { return sa.bag["~"+c] > 0 }
	}
	for _, c := range []string{"crash", "freeze", "blank_screen", "lockout", "unusable"} {
		if hasStated(c) {
			out = append(out, c)
		}
	}
	if hasStated("data_loss") && holdsData(hasStated) {
		out = append(out, "data loss")
	}
	out = append(out, moreHarm(text, has)...)
	if has("charge") && (has("duplicate") || has("wrong") || has("not_received")) {
		out = append(out, "wrong charge")
	}
	if has("charge") && len(uniqueLower(reAmount.FindAllString(text, 4))) >= 2 && (has("wrong") || reContrast.MatchString(text) || reMismatch.MatchString(text)) {
		out = append(out, "charged amount differs")
	}
	if m := reMultipleCharges.FindString(text); m != "" {
		out = append(out, fmt.Sprintf("charged more than once %q", strings.ToLower(m)))
	}
	if m := reUnwantedCharge.FindString(text); m != "" {
		out = append(out, fmt.Sprintf("unwanted charge %q", strings.ToLower(m)))
	}
	if has("recipient") && (has("wrong") || reMisdirected.MatchString(text)) {
		out = append(out, "money to the wrong party")
	}
	for _, p := range []struct {
		name string
		re   *regexp.Regexp
	}{{"exposure", reExposure}, {"account taken over", reTakeover}, {"data destroyed", reDestroyed}} {
		for _, loc := range p.re.FindAllStringIndex(text, 4) {
			m := strings.ToLower(text[loc[0]:loc[1]])
			before := strings.ToLower(text[max(0, loc[0]-12):loc[0]])
			if strings.Contains(before, "memory") || strings.Contains(before, "speicher") || reHypothetical.MatchString(text[max(0, loc[0]-30):loc[1]]) {
				continue // a memory leak is slowness; a harm that might happen is none
			}
			out = append(out, fmt.Sprintf("%s %q", p.name, m))
			break
		}
	}
	return out
}

// holdsData reports whether the text names something that holds the
// user's data (the vocabulary's data area: progress, a save, notes,
// files, messages...).
func holdsData(has func(string) bool) bool {
	for _, c := range conceptAreas["data"] {
		if has(c) {
			return true
		}
	}
	return false
}

// squeezeSpaces turns each run of spaces and tabs into one space: the
// patterns read "\s+" between words, and an indented log or a padded
// text costs them a step per blank.
func squeezeSpaces(s string) string {
	if !strings.Contains(s, "  ") && !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	blank := false
	for _, r := range s {
		if r == ' ' || r == '\t' {
			if !blank {
				b.WriteByte(' ')
			}
			blank = true
			continue
		}
		blank = false
		b.WriteRune(r)
	}
	return b.String()
}
