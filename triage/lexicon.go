package triage

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// The lexicon maps words and phrases of English, Spanish, German, French,
// Portuguese and Italian to generic software concepts. It knows nothing of
// any product: it is the vocabulary every app's bug reports share (crash,
// sign in, purchase, lost progress, sound...). A form ending in "*" matches
// any word starting with it. Longer phrases win over shorter ones, so
// "black screen" is one concept and not a colour and a screen.
//
// spec is the concept's specificity: how much sharing it says about two
// texts describing the same bug. "~crash" is shared by every crash report,
// so it weighs less than "~playlist".
var lexiconTable = []struct {
	id    string
	spec  float64
	forms string
}{
	{"crash", 0.5, `crash* | closes | closes itself | app closes | it closes | game closes | shuts down | shut down | force close* | force quit* | kicks me out | kicked me out | kicked out | quits | quit unexpectedly |
		se cierra | se cerro | se cae | se sale | se crashea | crashea | cierra sola | cierra solo |
		sturzt | sturzte | stuerzt | absturz* | abgesturzt | abgestuerzt | crasht | schliesst sich |
		plante | se ferme | ferme tout seul | se bloque et ferme |
		fecha sozinho | fecha sozinha | fechando sozinho | app fecha | jogo fecha | aplicativo fecha | trava e fecha | crasha |
		si chiude | va in crash | si arresta | crashato |
		npe | panic | panicked | nullpointer* | null pointer | nil pointer | null reference | nullreference* | segfault | sigsegv | sigabrt | sigkill | oom | outofmemory | out of memory | fatal`},
	{"blank_screen", 1, `black screen | goes black | blank screen | white screen | goes white |
		pantalla negra | pantalla en negro | pantalla blanca | schwarzer bildschirm | bildschirm wird schwarz | weisser bildschirm |
		ecran noir | ecran blanc | tela preta | tela branca | schermo nero | schermata nera | schermo bianco`},
	{"freeze", 0.8, `freez* | frozen | hang | hangs | hanging | hung | stuck | unresponsive | not responding | anr |
		se congela | congelad* | se queda pillad* | se tilda | se traba | friert | eingefroren | hangt | hangt sich auf | reagiert nicht |
		fige | se fige | bloque | gele | ne repond plus | trava | travou | travad* | congela | si blocca | bloccat* | non risponde`},
	{"performance", 1, `lag | lags | laggy | lagging | lagged | slow* | choppy | stutter* | jank* | frame rate | framerate | fps | sluggish | smooth |
		lento | lenta | lentitud | ralentiz* | tirones | ruckel* | langsam* | ruckelt | lent | lente | lenteur | saccad* | rame |
		lentidao | engasg* | scatti | rallent* | fluido | fluid*`},
	{"error", 0.5, `error* | exception* | fail | fails | failed | failing | failure* | went wrong | something went wrong |
		fehler* | fehlgeschlagen | schlagt fehl | erreur* | echec | echoue* | erro | erros | errore* | falla | fallo | fallido | falha* | fallisce | non riuscit*`},
	{"broken", 0.4, `broken | doesnt work | does not work | dont work | do not work | not working | stopped working | wont work | isnt working | no longer works | not work | no longer | ignores | ignored | ignoring | not applied | nicht mehr | ignoriert | ya no | ignora | ne plus | ignore | nao mais | non piu |
		no funciona | no me funciona | no va | dejo de funcionar | ya no funciona | funktioniert nicht | funktioniert nicht mehr | geht nicht | kaputt |
		ne marche pas | ne marche plus | ne fonctionne pas | ne fonctionne plus | marche pas | nao funciona | nao esta funcionando | parou de funcionar | non funziona | non mi funziona | smesso di funzionare`},
	{"unable", 0.3, `unable | unable to | cant | cannot | can not | couldnt | impossible | no puedo | no me deja | kann nicht | kann ich nicht | lasst sich nicht |
		impossible de | je ne peux pas | je narrive pas | n arrive pas | nao consigo | nao da | non riesco | impossibile`},
	{"wrong", 0.6, `wrong | incorrect* | not correct | inaccurate | mismatch* | falsch* | errone* | equivocad* | incorret* | sbagliat* | errad*`},
	{"login", 1, `login | logins | log in | logging in | logged in | log into | signin | sign in | signing in | signed in | sign on | auth | authentication | authenticat* | oauth | sso | single sign on |
		iniciar sesion | al iniciar sesion | al iniciar la sesion | inicio de sesion | inicie sesion | inicio sesion | iniciando sesion | loguear | logueo | logearme | anmeld* | einlogg* | eingeloggt | login |
		se connecter | me connecter | connecter | connexion | je me connecte | identifier | fazer login | ao fazer login | entrar na conta | iniciar sessao | ao iniciar sessao | logar | accedere | effettuare l accesso | accesso`},
	{"logout", 1, `logout | log out | logged out | logs me out | sign out | signed out | signs me out | cerrar sesion | cierra sesion | abmeld* | ausgeloggt | sair da conta`},
	{"disconnect", 1, `disconnect* | disconnected | drops the connection | loses connection | lost connection | connection drops | desconect* | se desconecta | getrennt | trennt sich | verbindung verloren | deconnect* | se deconnecte | disconness* | disconnett* | si disconnette`},
	{"account", 0.8, `account* | profile | avatar | user id | apple id | cuenta | cuentas | perfil | konto | kontos | profil | compte | comptes | conta | contas | profilo | utente`},
	{"password", 1, `password* | passwort | contrasena | mot de passe | senha | passcode | password reset | reset password | reset my password | reset link | forgot password`},
	{"verification", 1, `verification code | otp | 2fa | two factor | sms code | one time code | codigo de verificacion | bestatigungscode | code de verification | codigo de verificacao | codice di verifica`},
	{"store", 1, `store | stores | shop | shops | shopping | in app store | in game store | storefront | tienda | tiendas | boutique | magasin | loja | negozio | marketplace | market | catalog | catalogue`},
	{"appstore", 0.3, `app store | play store | google play | appstore | playstore`},
	{"purchase", 1, `buy | buys | buying | bought | purchas* | iap | in app purchase | cart | carts | basket | checkout | carrito | cesta | warenkorb | kasse | panier | carrinho | carrello | compra | compras | comprar | compre | comprado | comprada | comprei | comprato | comprare | acquist* |
		kauf | kaufe | kaufen | gekauft | einkauf* | acheter | achete* | achat* | order | orders | pedido | bestellung | commande`},
	{"charge", 1, `charge | charged | charges | double charged | billing | billed | bill | payment* | pay | paid | paying | refund* | receipt* | transaction* | invoice* | credit card | debit card | card was charged |
		cobro | cobros | cobrado | cobraron | cobrar | cobra | reembols* | pago | pagos | pague | pagar | pagando | pagado | factura* | tarjeta |
		abbuch* | abgebucht | bezahl* | zahlung* | ruckerstatt* | rechnung* | kreditkarte | debit* | preleve* | rembours* | paiement* | factur* | carte bancaire |
		cobranc* | cobrad* | pagamento* | paguei | cartao | addebit* | rimbors* | fattur* | pagato`},
	{"duplicate", 1, `twice | double | doubled | duplicate* | duplicat* | two times | 2 times | dos veces | doble | duplicad* | zweimal | doppelt* | deux fois | en double | duas vezes | due volte | doppi*`},
	{"not_received", 1, `not received | didnt receive | did not receive | never received | never got | didnt get | did not get | never arrived | not delivered | never delivered |
		no recibi | no he recibido | no me llego | nicht erhalten | nicht bekommen | nie erhalten | pas recu | jamais recu | rien recu | nao recebi | nunca recebi | non ho ricevuto | mai ricevuto`},
	{"data_loss", 1, `lost | lose | losing | loss | gone | wiped | wipe | erased | disappear* | vanish* | reset | resets | reset me | got reset | was reset | were deleted | was deleted | got deleted | been deleted | missing |
		perdi | perdido | perdida | perdidos | perdio | perder | se borro | borrad* | desapareci* | verlor* | verschwunden | geloscht | zuruckgesetzt | zurueckgesetzt |
		perdu | perdue | perdus | efface* | disparu* | remis a zero | perda | apagad* | sumiu | sumiram | perso | persi | persa | perse | cancellat* | scompars* | sparit* | azzerat*`},
	{"progress", 1, `progress | progression | save data | savegame | saved game | game data | my data | all my data | progreso | avance | fortschritt* | spielstand* | progresso | progressi | partida | partie | dados`},
	{"save", 1, `save | saves | saved | saving | guardar | guardado | guardada | guardo | speichern | gespeichert | speichert | sauvegard* | enregistr* | salvar | salvo | salvou | salvare | salvat* | salvataggio`},
	{"sync", 1, `cloud | sync* | synchron* | backup | backups | back up | icloud | nube | sincroniz* | copia de seguridad | wolke | nuage | nuvem | synchronis*`},
	{"audio", 1, `audio | sound* | music | musics | volume | mute | muted | silent | sonido* | musica | sin sonido | kein ton | der ton | ton fehlt | musik | lautstarke | le son | pas de son | musique | sem som | o som | suono | ducking | speaker | headphone* | auricular* | kopfhorer | ecouteur* | fone de ouvido | cuffie`},
	{"call", 1, `phone call | phone calls | incoming call | video call | voice call | llamada* | anruf* | telefonat | appel | appels | appel telephonique | ligacao | chamada* | chiamat* | telefonata`},
	{"return", 0.6, `resume* | resuming | comes back | come back | came back | returns | returned | return to | back to | goes back | loops back | loop back | takes me back | ramene | renvoie | regresa | me devuelve | de vuelta | springt zuruck | landet wieder | riporta | reanud* | vuelve | volver | vuelvo | zuruck | kommt zuruck | revient | reprend* | retour | retourne | volta | voltar | retorna | torna | ritorna | riprend*`},
	{"home_screen", 1, `home screen | homescreen | welcome screen | welcome page | start page | landing page | login screen | sign in screen | main menu | main screen | start screen | start menu | pantalla de bienvenida | willkommensbildschirm | ecran de bienvenue | tela de boas vindas | schermata di benvenuto | pantalla de inicio | pantalla principal | menu principal | startbildschirm | hauptmenu | hauptbildschirm |
		ecran d accueil | ecran titre | ecran principal | ecran de demarrage | ecran d accueil | tela inicial | tela principal | schermata iniziale | schermata principale | menu principale`},
	{"launch", 1, `launch | launches | launching | startup | start up | on start | app start | opening the app | open the app | open the game | opening the game | start the app | start the game | splash |
		al abrir | al iniciar | abrir la app | abrir el juego | iniciar la app | al arrancar | arranque | beim start | beim starten | beim offnen der app | app starten | demarrage | au lancement | lancement | ao abrir | ao iniciar | inicializacao | all avvio | avvio | all apertura`},
	{"open", 0.35, `open | opens | opening | opened | double tap | double click | tap | taps | tapping | tapped | press | presses | pressed | pressing | click* | go to | select | selecting | access | accessing | enter | navigate* |
		abrir | abro | abre | abri | abierto | abriendo | toco | pulso | tocar | pulsar | hago clic | offne | offnen | offnet | tippe | tippen | klicke | klicken | ouvr* | ouvre | appuie* | clique* | clico | aprire | apro | apri | tocco | clicco | premo`},
	{"update", 0.45, `update* | updating | upgrade* | new version | latest version | last update | actualiz* | nueva version | aktualisier* | neue version | mise a jour | nouvelle version | atualiz* | nova versao | aggiorn* | nuova versione`},
	{"install", 0.4, `install* | reinstall* | uninstall* | instal* | reinstal* | neu installiert | desinstal* | disinstall*`},
	{"negative", 1, `negative | negativ* | below zero | minus | negatif* | negativo`},
	{"display", 0.6, `display* | shows | showing | shown | visual* | cosmetic* | overlap* | misalign* | cut off | truncat* | layout | typo | typos | glitch* | render* | rendering |
		muestra | se ve | se superpone | anzeige* | wird angezeigt | zeigt | uberlapp* | affich* | chevauche* | exib* | mostra | sobrepo* | visualizz* | sovrappo*`},
	{"button", 0.5, `button* | icon* | boton | botones | icono | botao | bouton* | icone* | schaltflache | knopf | pulsante | tasto | tooltip*`},
	{"screen", 0.25, `screen | screens | pantalla | bildschirm | ecran | tela | schermo | schermata | page | pagina | seite`},
	{"settings", 1, `settings | setting | preferences | options | ajustes | configuracion | einstellung* | parametres | reglages | configurac* | impostazioni`},
	{"notification", 1, `notification* | notif* | push notification* | alert* | reminder* | notificacion* | aviso* | benachrichtigung* | mitteilung* | notificac* | notifica* | rappel* | lembrete* | promemoria`},
	{"network", 1, `network | connection | connectivity | offline | wifi | wi fi | internet | no connection | timeout* | timed out | server* | conexion | sin conexion | verbindung* | netzwerk* | keine verbindung |
		reseau | connexion internet | hors ligne | conexao | sem conexao | rede | connessione | rete`},
	{"battery", 1, `battery | batteries | drain* | overheat* | gets hot | batteria | bateria | akku | batterie | se calienta | wird heiss | chauffe | esquenta | surriscald*`},
	{"storage", 1, `storage | disk space | free space | space on | almacenamiento | espacio | speicherplatz | stockage | espace | armazenamento | espaco | archiviazione | spazio`},
	{"camera", 1, `camera | cameras | photo* | picture* | image* | gallery | camara | foto* | imagen* | kamera | bild | bilder | appareil photo | galerie | galeria | fotocamera | immagin*`},
	{"upload", 1, `upload* | uploading | subir | subida | subo | sube | subes | subi | subiendo | subido | hochlad* | hochgeladen | televers* | envoyer | carregar | enviar arquivo | caricare | caricamento`},
	{"download", 1, `download* | descarg* | herunterlad* | heruntergeladen | telecharg* | baixar | baixando | scaric*`},
	{"export", 1, `export* | exporta* | exportieren | exportiert | exporter | share | sharing | shared | compart* | partag* | condivid* | print* | imprim* | drucken | druckt | stampa*`},
	{"file", 0.8, `attachment* | attach | attached | anexo* | adjunt* | anhang* | piece jointe | allegat* | file | files | archivo* | datei* | fichier* | arquivo* | document* | dokument* | pdf | pdfs`},
	{"filter", 1, `filter | filters | filtered | filtering | filtro | filtros | filtrar | filtert | filtern | gefiltert | filtre | filtres | filtrer | filtra | filtri | sort | sorting | sorted | ordenar | sortieren | trier | ordinare`},
	{"search", 1, `search* | busca* | buscar | suche | suchen | sucht | recherch* | pesquis* | ricerca | cercare`},
	{"map", 1, `map | maps | location* | gps | ubicacion | mapa | mapas | standort* | landkarte | localisation | localizacao | posizione | mappa`},
	{"video", 1, `video* | playback | stream* | streaming | reproducir | reproduccion | reproductor | wiedergabe | lecture | reproducao | riproduzione`},
	{"keyboard", 1, `keyboard* | teclado | tastatur | clavier | tastiera | typing`},
	{"theme", 1, `dark mode | dark theme | light mode | theme* | modo oscuro | dunkelmodus | dunkler modus | mode sombre | modo escuro | tema scuro | tema*`},
	{"accessibility", 1, `colour blind | color blind | colorblind | colourblind | daltonism* | daltonico | farbenblind* | daltonien | accessib* | accesibilidad | barrierefrei* | contrast* | palette | font size | screen reader | voiceover | talkback`},
	{"subscription", 1, `subscription* | subscribe* | premium | membership | suscripcion* | abo | abos | abonnement* | assinatura* | abbonament* | renew* | auto renew`},
	{"ads", 1, `ad | ads | advert* | advertisement* | anuncio* | werbung | publicite* | pubs | pubblicita`},
	{"restore", 1, `restore* | restoring | restaur* | recover | recuperar | wiederherstell* | recuperer | ripristin*`},
	{"transfer", 1, `transfer* | transferencia* | uberweisung* | virement* | bonific* | send money | enviar dinero | geld senden | envoyer de l argent`},
	{"balance", 1, `balance | balances | saldo | saldos | kontostand | solde`},
	{"card", 1, `card | cards | credit card | debit card | karte | karten | kreditkarte | carte | carte bancaire | carta | cartao | tarjeta`},
	{"note", 1, `note | notes | nota | notas | notiz* | notizen | bloc notes | appunti`},
	{"calendar", 1, `calendar* | calendario | kalender | calendrier | agenda`},
	{"time", 1, `clock | time zone | timezone | device time | device clock | date and time | reloj | uhrzeit | zeitzone | horloge | fuseau horaire | relogio | fuso horario | orologio | fuso orario`},
	{"language", 1, `translat* | language | languages | idioma | idiomas | sprache | ubersetz* | langue | traduc* | traduz* | lingua`},
	{"email", 1, `email* | e mail | mail | correo | correos`},
	{"message", 1, `message* | chat* | mensaje* | nachricht* | mensagem* | messaggi* | messaggio | dm | dms | inbox`},
	{"reward", 1, `reward* | bonus | recompens* | belohnung* | premio | premios | daily login bonus`},
	{"level", 0.6, `level | levels | nivel | niveles | niveis | livello | livelli | niveau | niveaux | stage | stages`},
	{"loading", 1, `loading | load | loads | loader | loaders | cargando | carga | cargar | laden | ladt | ladebildschirm | chargement | carregando | carregamento | caricamento`},
	{"bluetooth", 1, `bluetooth | pairing | paired | emparejar | koppeln | gekoppelt | appairage | emparelhar | accoppiare`},
	{"vibration", 1, `vibration* | vibrate* | haptic* | vibracion | vibrieren | vibracao | vibrazione`},
	{"blank", 0.7, `blank | empty | grey | gray | en blanco | gris | grau | cinza | grigio | vacio | vacia | leere | vide | vazio | vazia | vuoto | vuota`},
	{"permission", 1, `permission* | permiso* | berechtigung* | autorisation* | permissao | permessi | permesso`},
	{"widget", 1, `widget* | home widget`},
	{"confirm", 0.8, `confirm | confirms | confirmed | confirming | confirmation* | bestatig* | bestaetig* | confirmar | confirmo | confirmacion | confirmer | confirme | confirmacao | confermar* | conferma*`},
	{"signup", 1, `sign up | signup | signing up | register | registering | registration | create an account | create account | registr* | inscri* | cadastr* | konto erstellen | crear cuenta | creer un compte | onboarding`},
	{"delivery", 1, `delivery | deliveries | shipping | shipment | courier | couriers | driver | tracking | tracking number | track my order | follow my order | seguimiento | repartidor | verfolgen | sendungsverfolgung | lieferant | suivi | livreur | rastreamento | rastrear | entregador | tracciamento | fattorino | entrega* | envio | envios | lieferung* | versand | livraison* | consegna | spedizion*`},
	{"booking", 1, `booking* | reservation* | appointment* | reserva | reservas | buchung* | reservierung* | termin | termine | rendez vous | prenotazion* | agendamento*`},
	{"workout", 1, `workout* | exercise* | training | entrenamiento* | ejercicio* | trainieren | ubung* | entrainement* | exercice* | treino* | exercicio* | allenamento* | esercizi*`},
	{"playlist", 1, `playlist* | song | songs | album | albums | cancion* | lista de reproduccion | lied | lieder | chanson* | cancao | cancoes | canzon* | brano | brani`},
	{"contact", 1, `contact | contacts | contacto* | kontakt* | contatt* | contato*`},
	{"edit", 1, `edit | edits | editing | edited | editor | editar | edicion | bearbeit* | modifier | editer | edicao | modificare | modifica`},
	{"biometric", 1, `face id | touch id | faceid | touchid | fingerprint* | biometr* | huella* | fingerabdruck* | empreinte* | impressao digital | impronta*`},
	{"statement", 1, `statement* | extracto* | kontoauszug* | releve* | extrato* | estratto*`},
	{"scan", 1, `scan* | qr | qr code | escane* | scann* | escanear | digitalizar`},
	{"alarm", 1, `alarm* | timer* | alarma* | wecker | reveil | alarme | sveglia`},
	{"feed", 1, `feed | feeds | timeline | post | posts | publicacion* | beitrag | beitrage | publication* | postagem* | pubblicazion*`},
	{"discount", 1, `coupon* | discount* | promo code | promo | promos | promotion* | promocion* | promocao | promozion* | voucher* | cupon* | descuento* | gutschein* | rabatt* | reduction | remise | cupom* | desconto* | sconto | sconti | buono`},
	{"price", 1, `price* | pricing | total | totals | amount* | precio* | importe* | preis* | betrag* | prix | montant* | preco* | valor* | prezzo* | importo*`},
	{"tax", 1, `tax | taxes | vat | impuesto* | iva | steuer* | mwst | taxe* | tva | imposto* | tasse`},
	{"localization", 1, `locali* | i18n | l10n | internationali*`},
	// Harm concepts (severity): exposure of secrets or private data, being
	// shut out of one's account, an app that cannot be used at all. A
	// memory leak is a performance problem, not an exposure.
	{"performance", 1, `memory leak | memory leaks | leaking memory | fuga de memoria | speicherleck | fuite memoire | fuite de memoire | vazamento de memoria | perdita di memoria`},
	{"security", 1, `leak | leaks | leaked | leaking | exposed | exposes | exposure | data breach | breach | hacked | compromised | unauthorized | unauthorised | vulnerabilit* | privacy | plain text | plaintext | in clear text |
		filtrad* | expuest* | fuga de datos | hackead* | vulnerabilidad* | privacidad | datenleck | geleakt | offengelegt | gehackt | sicherheitsluck* | datenschutz |
		fuite | fuites | divulgu* | pirate | faille | confidentialite | vazad* | vazamento | expost* | invadid* | vulnerabilidade* | privacidade |
		trapelat* | espost* | violazione | vulnerabilita | riservatezza`},
	{"credential", 1, `credential* | api key | api keys | access key | access keys | secret key | private key | access token | auth token | token | tokens | secret | secrets |
		credencial* | clave secreta | zugangsdaten | schlussel | identifiant* | cle secrete | credenciais | chave secreta | credenziali | chiave segreta`},
	{"lockout", 1, `locked out | lock me out | locks me out | locking me out | account locked | account blocked | account suspended | account disabled |
		cuenta bloqueada | cuenta suspendida | bloquearon mi cuenta | konto gesperrt | ausgesperrt | compte bloque | compte suspendu | conta bloqueada | conta suspensa | account bloccato | account sospeso`},
	{"unusable", 1, `unusable | unuseable | completely unusable | cant use the app | cannot use the app | inutilizable | inusable | unbrauchbar | nicht nutzbar | inutilisable | inutilizavel | inutilizzabile`},
	{"money", 0.5, `money | funds | cash | dinero | fondos | efectivo | geld | guthaben | argent | fonds | dinheiro | fundos | soldi | denaro | fondi`},
	{"recipient", 1, `recipient* | payee* | beneficiar* | destinatari* | empfanger* | zahlungsempfanger | wrong person | wrong account`},
	{"scan", 1, `capture | captures | captured | capturing | captura* | erfass* | aufnehm* | captur*`},
	// "close"/"closed" alone is an account, a ticket or a match that is
	// closed, not the app dying (the romance-ending fallback read it as
	// "closes"); the app closing is spelt out as a phrase.
	{"close_word", 0.2, `close | closed | closing | closure`},
	{"crash", 0.5, `app closed | it closed | game closed | closed itself | closed by itself | closed on me | closed unexpectedly | closes unexpectedly | app closing | keeps closing |
		just closed | suddenly closed | closed suddenly | then closed | simply closed | instantly closed | closed immediately | closed again | closed every time`},
	// Failure and state vocabulary of any product's reports (DUPLICATES):
	// logs, masking, delays, toggles, pending states, the app in the
	// background, exit codes, schedules and time zones.
	{"log", 0.8, `log | logs | log file | log files | log output | logfile | logfiles | logged output | protokoll | protokolle | protokolldatei | journal | journaux | fichier journal | registro de eventos | archivo de log | arquivo de log | file di log`},
	{"mask", 1, `mask | masks | masked | masking | unmasked | redact* | obfuscat* | ausgeblendet | ausblenden | maskiert | geschwarzt | masque | masquer | masquee | masques | enmascar* | mascarad* | mascherat* | oscurat* | censur*`},
	{"delay", 1, `late | delayed | delay | delays | hours late | minutes late | arrive late | arrives late | arrived late | retard | retards | en retard | verspatet | verspaetet | verzogert | verzoegert | verspatung | verzogerung | retraso | retrasad* | con retraso | llega tarde | atraso | atrasad* | chega atrasad* | ritardo | ritardi | in ritardo`},
	{"toggle", 0.6, `toggle | toggles | toggled | switch | switches | schalter | umschalter | interruptor | interrupteur | bouton bascule | levetta | interruttore`},
	{"update", 0.45, `refresh | refreshes | refreshing | refreshed | reload | reloads | reloading | reloaded | pull to refresh | pull down to refresh | rafraichi* | recargar | recarregar | ricaricare | neu laden`},
	{"pending", 1, `pending | processing | in progress | pendiente | procesando | en proceso | ausstehend | wird verarbeitet | in bearbeitung | en attente | en cours de traitement | en traitement | pendente | processando | em processamento | in attesa | in elaborazione`},
	{"loading", 1, `spinner | spinners | spinning | spinning wheel | spinning circle | loading circle | loading wheel | ladekreis | ladesymbol | rueda de carga | roue qui tourne | roue multicolore | rodinha | rotellina`},
	{"background", 0.8, `background | backgrounded | in the background | app switcher | switching apps | switch apps | switched apps | segundo plano | en segundo plano | hintergrund | im hintergrund | arriere plan | en arriere plan | em segundo plano | in background | multitask*`},
	{"exit_code", 1, `exit code | exit codes | exit status | return code | exitcode | codigo de salida | code de sortie | code retour | codigo de saida | codice di uscita | ruckgabewert | ruckgabecode | exit-code`},
	{"schedule", 1, `schedule | schedules | scheduled | scheduler | cron | crontab | nightly | programado | programada | programacion | tarea programada | zeitplan | geplant | zeitgesteuert | planifie* | planification | tache planifiee | agendad* | programmat* | pianificat*`},
	{"time", 1, `zona horaria | zonas horarias | utc | gmt | daylight saving | daylight savings | summer time | cambio de hora | horario de verano | zeitumstellung | sommerzeit | winterzeit | heure d ete | changement d heure | horario de verao | ora legale | midnight | medianoche | mitternacht | minuit | meia noite | mezzanotte`},
	{"crash", 0.5, `app dies | it dies | just dies | dies with | died with | process dies | stack trace | stacktrace | traceback | core dump | crash dump | thread dump | stack dump`},
	{"feedback_positive", 0.1, `love | loved | loving | great | amazing | awesome | excellent | perfect | fantastic | best | wonderful | brilliant | beautiful | fun | addictive | five stars | 5 stars | 10 10 |
		me encanta | encanta | genial | excelente | increible | maravilloso | toll | super | grossartig | wunderbar | liebe | genial | geniale | adore | magnifique | excelente | incrivel | otimo | adoro | fantastico | bellissimo | stupendo`},
	// A counter or a list sent back to nothing, things out of order, a
	// step that stops partway, "I can't manage it" (added for intake: a
	// malfunction told as a question still names one of these).
	{"data_loss", 1, `back to zero | back to 0 | reset to zero | reset to 0 | went to zero | volvio a cero | vuelto a cero | puso a cero | auf null gesetzt | auf null zuruckgesetzt | revenu a zero | retombe a zero | voltou a zero | voltou para zero | zerou | tornato a zero | tornata a zero | terug naar nul | op nul gezet | wyzerowal* | wyzerowan*`},
	{"wrong", 0.6, `mixed up | jumbled | scrambled | out of order | desordenad* | mezclad* | durcheinander | vertauscht | embrouill* | dans le desordre | baralhad* | baguncad* | misturad* | fora de ordem | mescolat* | sballat* | in disordine | door elkaar | pomieszan*`},
	{"unable", 0.3, `no consigo | no logro | no lo consigo | schaffe es nicht | non ci riesco`},
	{"freeze", 0.8, `se queda parado | se queda parada | se queda colgado | se queda colgada | se queda atascado | se queda atascada | bleibt hangen | reste bloque | reste bloquee | fica parado | fica parada | fica travado | resta bloccato | resta bloccata | rimane bloccato | rimane bloccata`},
	// General coverage (VOCABULARY). Any product's feedback talks about
	// the same ~150 things; each should read the same in the eight
	// languages the airlock reads (en, es, de, fr, pt, it, nl, pl), so a
	// report in one meets a ticket in another. The concepts, by group:
	//   UI: screen, home_screen, button, toggle, menu, tab, window, tile,
	//     list, line, detail, field, form, control, link, scroll, gesture,
	//     zoom, font, color, size, text, theme, widget, keyboard, display,
	//     visible, hidden, mask, blank, blank_screen, loading, rotation.
	//   Actions: open, launch, close_word, return, restart, update (also
	//     refresh), install, save, edit, delete, cancel, retry, undo, copy,
	//     search, filter, export (share, print), import, upload, download,
	//     scan, confirm, restore, sync, unlink, block (lock, freeze a card),
	//     invite, follow.
	//   States: crash, freeze, performance, error, broken, unable, wrong,
	//     pending, success, unavailable, available, delay, duplicate,
	//     data_loss, not_received, unusable, expire, instant.
	//   Time: time (clock, zone, midnight), date, schedule (daily,
	//     nightly), calendar, alarm, history, recurring, background.
	//   Money: money, price (amount, total), charge (payment, transaction),
	//     purchase, fee, tax, discount, currency, balance, transfer,
	//     statement, card, wallet, contactless, atm, pin, subscription,
	//     budget, limit, recipient.
	//   Data: file, folder, spreadsheet, document id (id_document), log,
	//     database, cache, storage, memory, backup (sync), queue, category,
	//     tag, favorite, note, contact, address, phone_number, name,
	//     statistics, chart, dashboard, progress, level, reward.
	//   People and accounts: account, login, logout, signup, password,
	//     verification, biometric, session, lockout, credential, security,
	//     permission, friend, group, message, email, comment, review,
	//     support, voice, feed.
	//   Devices and connectivity: device, phone, tablet, smartwatch, web,
	//     cpu, camera, microphone, audio, vibration, battery, bluetooth,
	//     network (offline, timeout), disconnect, notification, map,
	//     video, subtitle, call, emoji, autofill, deploy, env_var,
	//     exit_code, request, response.
	// A word that is a common word of another language ("data" is a date
	// in it/pt/pl, "fin", "rate", "list(en)" in de) is given only as a
	// phrase. Concept ids repeat here to add languages to the entries
	// above; the first entry's spec is the concept's spec.
	{"crash", 0.5, `crasht | crashen | gecrasht | valt uit | sluit af | sluit zichzelf | awaria | awarii | awarie | wywala | wywalilo | wysypuje | wysypala | zamyka sie | crashuje`},
	{"blank_screen", 1, `zwart scherm | wit scherm | scherm wordt zwart | czarny ekran | bialy ekran | pusty ekran | tela em branco | pantalla vacia | ecran vide | schermo vuoto | leerer bildschirm`},
	{"freeze", 0.8, `froze | bevriest | bevroren | loopt vast | vastgelopen | reageert niet | zawiesza* | zawiesil* | zawieszon* | zamarza | nie odpowiada`},
	{"performance", 1, `traag | trage | langzaam | hapert | powoln* | laguje | przycina | zacina`},
	{"error", 0.5, `fout | fouten | foutmelding* | mislukt | blad | bledu | bledy | bledem | nieudan* | niepowodzeni*`},
	{"broken", 0.4, `werkt niet | werkt niet meer | doet het niet | kapot | nie dziala | przestal dzialac | przestala dzialac | przestalo dzialac | zepsut*`},
	{"unable", 0.3, `kan niet | lukt niet | nie moge | nie mozna | nie da sie`},
	{"wrong", 0.6, `verkeerd* | onjuist* | nieprawidlow* | niepoprawn* | bledn* | erron* | errat* | faux | fausse | fausses`},
	{"login", 1, `inloggen | ingelogd | inlogt | aanmelden | aangemeld | logowani* | zalogowa* | zaloguj* | logowac | logowaniu`},
	{"logout", 1, `abgemeldet | uitloggen | uitgelogd | logt uit | afmelden | afgemeld | wylogow* | wyloguj* | cierra la sesion | se deconnecte | me deconnecte | logga fuori | disconnesso dall account | desconectado da conta`},
	{"disconnect", 1, `verbinding verbroken | verbroken | rozlacza | rozlaczon* | utrata polaczenia`},
	{"account", 0.8, `profiel | koncie | konta | kontem | kontu | profilu`},
	{"password", 1, `wachtwoord* | haslo | hasla | haslem | contrasenas | passwort* | mot de passe | palavra passe | parola d ordine`},
	{"verification", 1, `verificatiecode | kod weryfikacyjny | kod sms | codigo sms | sms code | code sms | codice sms | sms kod | verifizierungscode`},
	{"store", 1, `winkel | winkels | sklep | sklepu | sklepie`},
	{"purchase", 1, `kopen | gekocht | koop | aankoop | aankopen | winkelwagen* | bestelling* | bestellen | besteld | kupic | kupilem | kupilam | kupil | kupila | zakup* | koszyk* | zamowieni*`},
	{"charge", 1, `betaling* | betalen | betaald | afgeschreven | terugbetaling | factuur | facturen | platnosc* | platnosci | zaplacil* | zaplacic | obciazen* | obciazyl* | faktur* |
		movimientos | movimiento | umsatz* | umsaetze | les operations | mes operations | movimentac* | movimentos | movimenti | transacties | transactie | transakcj* | transacao | transacoes | transaccion*`},
	{"duplicate", 1, `dubbel* | twee keer | dwa razy | podwojn* | zdublowan* | dwukrotn*`},
	{"not_received", 1, `niet ontvangen | nooit ontvangen | nie otrzymal* | nie dostal* | nie doszl*`},
	{"data_loss", 1, `kwijt | verloren | verdwenen | gewist | stracil* | zniknel* | zniknal* | znikaja | przepadl*`},
	{"progress", 1, `voortgang | postep | postepy | postepu`},
	{"save", 1, `opslaan | opgeslagen | slaat op | zapis* | gespeichert | sauvegarde | salvataggi`},
	{"sync", 1, `kopia zapasowa | kopii zapasowej | reservekopie | copia de seguranca | copie de sauvegarde`},
	{"audio", 1, `geluid | geluiden | dzwiek* | glosnosc* | glosnik*`},
	{"call", 1, `oproep* | telefoongesprek* | rozmowa telefoniczna | rozmowy telefoniczne`},
	{"return", 0.6, `komt terug | terug naar | gaat terug | wraca | wrocil* | powrot*`},
	{"home_screen", 1, `home page | homepage | home tab | startscherm | beginscherm | hoofdscherm | hoofdmenu | startpagina | ekran glowny | ekranie glownym | ekran startowy | menu glowne | strona glowna | startseite | page d accueil | pagina inicial | pagina iniziale | pagina de inicio`},
	{"launch", 1, `opstarten | bij het opstarten | bij opstarten | uruchomieni* | przy starcie | przy uruchomieniu | uruchamia*`},
	{"open", 0.35, `openen | opent | geopend | klikken | klik | tik op | tikken | otworz* | otwiera* | otwarci* | kliknie* | klikam | klikne | nacisk*`},
	{"update", 0.45, `up to date | bijwerken | bijgewerkt | nieuwe versie | aktualiz* | nowa wersja | nowej wersji | actualis* | refrescar | odswiez* | verversen | ververst | vernieuwen`},
	{"install", 0.4, `zainstalow* | odinstalow* | geinstalleerd | installeren`},
	{"display", 0.6, `weergave | weergegeven | toont | wyswietl*`},
	{"button", 0.5, `knop | knoppen | przycisk* | ikon* | pictogram*`},
	{"screen", 0.25, `scherm | schermen | ekran | ekranie | ekranu | ekrany | strona | stronie | strony | tela`},
	{"settings", 1, `instellingen | ustawieni* | config | configuration | configurations | konfiguration | configuratie | konfiguracj* | impostazione`},
	{"notification", 1, `melding | meldingen | pushmelding* | powiadomien* | powiadomieni*`},
	{"network", 1, `netwerk | geen verbinding | geen internet | siec | sieci | brak internetu | bez internetu | brak polaczenia | polaczenie z internetem | sin internet | ohne internet | sans internet | sem internet | senza internet | fuori linea | offline modus | tryb offline`},
	{"battery", 1, `batterij | accu | bateri* | batterie*`},
	{"storage", 1, `opslagruimte | opslag | miejsce na dysku | przestrzen dyskowa`},
	{"camera", 1, `afbeelding* | zdjeci* | zdjec | aparat`},
	{"upload", 1, `uploaden | geupload | wgrac | wgrywa* | przesylani* | przeslac | przeslanie | hochladen | caricato | carregou | envio de arquivo`},
	{"download", 1, `downloaden | gedownload | pobier* | pobra* | pobrani*`},
	{"export", 1, `exporteren | geexporteerd | eksport* | delen | gedeeld | udostepni* | drukow* | afdrukken | teilen | geteilt`},
	{"file", 0.8, `bestand | bestanden | bijlage* | plik | pliki | pliku | plikow | zalacznik*`},
	{"filter", 1, `sorteren | gesorteerd | filtrow* | sortow* | filtr | filtry`},
	{"search", 1, `zoeken | zoekt | zoekfunctie | gezocht | wyszuk* | szukam | szukac | szuka`},
	{"map", 1, `plattegrond | locatie | locaties | lokalizacj* | ubicaciones | posizioni`},
	{"video", 1, `afspelen | wideo | odtwarza* | odtwarzani* | filmik*`},
	{"keyboard", 1, `toetsenbord | klawiatur*`},
	{"theme", 1, `donkere modus | tryb ciemny | ciemny motyw | motyw | motywy`},
	{"accessibility", 1, `toegankelijk* | ulatwienia dostepu | dostepnosc* | lector de pantalla | bildschirmleser | lecteur d ecran | leitor de tela | lettore di schermo | schermlezer | czytnik ekranu`},
	{"subscription", 1, `subskrypcj* | abonament* | abonnementen | lidmaatschap`},
	{"ads", 1, `advertentie* | reclame | reklam* | publicidad | anuncios | pubblicita | propaganda`},
	{"restore", 1, `herstellen | hersteld | herstel | przywroc* | przywraca* | przywrocen*`},
	{"transfer", 1, `overboeking* | overmaken | overgemaakt | overschrijving* | przelew* | przelac | transferencias | transferir | transferiu | uberweis* | ueberweis*`},
	{"card", 1, `kaart | kaarten | bankpas | betaalpas | pinpas | creditcard | karta | karty | karte | karcie | karta kredytowa | karta platnicza | tarjetas | cartoes | carte di credito`},
	{"note", 1, `notitie* | notatk* | notatek`},
	{"calendar", 1, `kalendarz* | agendas`},
	{"time", 1, `tijdzone | tijdzones | klok | zomertijd | wintertijd | middernacht | na middernacht | strefa czasowa | strefy czasowej | zegar* | czas letni | o polnocy | po polnocy | przed polnoca | fuso horario | huso horario`},
	{"language", 1, `taal | talen | vertaling* | vertaald | jezyk* | tlumacz*`},
	{"email", 1, `courriel* | correo electronico | mejl | maila | mailem`},
	{"message", 1, `bericht | berichten | wiadomosc* | wiadomosci | czat*`},
	{"reward", 1, `beloning* | nagrod* | nagroda`},
	{"level", 0.6, `poziom | poziomy | poziomu`},
	{"loading", 1, `laadt | wordt geladen | wczytyw* | wczytuje | laduje sie | caricando`},
	{"bluetooth", 1, `koppelen | gekoppeld | parowani* | sparowa*`},
	{"vibration", 1, `trilling* | trilt | wibracj* | wibruje`},
	{"blank", 0.7, `leeg | lege | pusty | pusta | puste | pustym | leer | vides | vazios | vuoti`},
	{"permission", 1, `toestemming* | uprawnien* | zezwoleni* | permisos | autorisations | permissoes`},
	{"confirm", 0.8, `bevestig* | potwierdz* | conferm*`},
	{"signup", 1, `rejestracj* | zarejestrow* | aanmelding | account aanmaken | zaloz konto | zalozyc konto`},
	{"delivery", 1, `bezorging* | bezorger | levering* | geleverd | dostaw* | kurier*`},
	{"booking", 1, `reservering* | afspraak | afspraken | rezerwacj* | wizyt*`},
	{"workout", 1, `trening* | oefening* | cwiczeni*`},
	{"playlist", 1, `afspeellijst* | liedje* | piosenk* | utwor | utwory | playlista`},
	{"contact", 1, `contactpersoon | contactpersonen | kontakty`},
	{"edit", 1, `bewerken | bewerkt | wijzigen | gewijzigd | edytow* | edycj* | modificar | modificado | modifie | modifiee | editieren`},
	{"biometric", 1, `vingerafdruk* | gezichtsherkenning | odcisk palca | odcisku palca | rozpoznawanie twarzy | reconocimiento facial | gesichtserkennung | reconnaissance faciale | reconhecimento facial | riconoscimento facciale`},
	{"statement", 1, `afschrift* | rekeningoverzicht* | wyciag* | kontoauszuge | estado de cuenta | estratto conto`},
	{"scan", 1, `scannen | gescand | skanow* | zeskanow* | skaner`},
	{"alarm", 1, `wekker | budzik* | minutnik*`},
	{"feed", 1, `tijdlijn | wpis | wpisy`},
	{"discount", 1, `korting* | kortingscode | znizk* | rabat | rabaty | kupon*`},
	{"price", 1, `prijs | prijzen | bedrag | bedragen | cena | ceny | cene | kwota | kwoty | kwote | kwocie | suma | sumy`},
	{"tax", 1, `btw | belasting* | podatek | podatku | podatki`},
	{"security", 1, `beveiliging* | gelekt | gehackt | wyciek* | zhakowan* | prywatnosc* | privacy | lekken`},
	{"credential", 1, `inloggegevens | sleutel | sleutels | klucz | klucze | klucza | dane logowania | clave api | cle api | chave api | chiave api | api sleutel | klucz api | api schlussel |
		secreto | secretos | geheim | geheimen | sekret | sekrety | segredo | segredos | segreto | segreti | geheimnis`},
	{"lockout", 1, `account geblokkeerd | konto zablokowane | konto zostalo zablokowane | buitengesloten`},
	{"unusable", 1, `onbruikbaar | bezuzyteczn* | nie nadaje sie do uzytku | onbruikbare`},
	{"money", 0.5, `pieniadz* | pieniedzy | srodki | srodkow | centen`},
	{"recipient", 1, `ontvanger* | begunstigde* | odbiorc* | odbiorca`},
	{"log", 0.8, `logboek | logbestand* | logi | logach | dziennik zdarzen | plik logu | registros de log | logs de erro`},
	{"mask", 1, `gemaskeerd | maskeren | maskowa* | zamaskow* | maskiert | verhullt`},
	{"delay", 1, `vertraging* | vertraagd | te laat | opozni* | spozni* | z opoznieniem | verzoegerung`},
	{"toggle", 0.6, `schakelaar* | przelacznik* | interruptores | interrupteurs | chave seletora | interruttori`},
	{"pending", 1, `in behandeling | in afwachting | oczekuj* | w toku | przetwarzani* | w trakcie przetwarzania`},
	{"background", 0.8, `achtergrond | op de achtergrond | w tle | na drugim planie`},
	{"exit_code", 1, `exitcode | afsluitcode | kod wyjscia | kod zakonczenia | exit status`},
	{"schedule", 1, `gepland | ingepland | zaplanowan* | harmonogram*`},
	{"periodic", 0.6, `daily | weekly | monthly | diariamente | semanal | semanalmente | mensual | mensualmente | taglich | wochentlich | monatlich | quotidien | quotidienne | hebdomadaire | mensuel | mensuelle | mensal | mensalmente | giornalier* | settimanal* | mensile | mensilmente | dagelijks | wekelijks | maandelijks | codzienn* | cotygodniow* | comiesieczn*`},
	{"signup", 1, `registreren | geregistreerd`},
	// New concepts of the general coverage.
	{"date", 0.8, `date | dates | dated | timestamp* | time stamp | fecha | fechas | fechad* | datum | datums | datierung | la date | les dates | une date | date de | la data | le date | una data | data di | con data | data de | data da | data do | della data | data errada | data errata | data sbagliata | data incorreta | daty | data transakcji | data platnosci`},
	{"list", 0.5, `list | lists | listing | listed | lista | listas | listado | liste | lijst | lijsten | listy | liscie | elenco | elenchi`},
	{"history", 0.8, `history | histories | historial | historico | historica | verlauf | historie | historique | cronologia | storico | geschiedenis | historia | historii | recent activity | actividad reciente | letzte aktivitat | activite recente | atividade recente | attivita recente | recente activiteit | ostatnia aktywnosc`},
	{"tile", 0.8, `tile | tiles | kachel | kacheln | tuile | tuiles | riquadro | riquadri | tegel | tegels | kafelek | kafelki | kafelka | mosaico | mosaicos`},
	{"detail", 0.5, `detail* | detalle* | dettagli* | dettaglio | detalhe* | szczegol* | detailansicht | detailpagina`},
	{"line", 0.4, `line | lines | linea | lineas | zeile | zeilen | ligne | lignes | linha | linhas | riga | righe | lijn | lijnen | wiersz | wiersze | wierszy | linii | linie`},
	{"queue", 0.9, `queue | queues | queued | queueing | queuing | en cola | la cola | cola de espera | warteschlange* | file d attente | en file | na fila | em fila | fila de espera | in coda | la coda | wachtrij* | kolejk*`},
	{"restart", 0.8, `restart* | reboot* | relaunch* | reinici* | neustart* | neu starten | neu gestartet | startet neu | redemarr* | relance | relancer | riavvi* | herstart* | opnieuw opstarten | zrestartowa* | restartow* | ponowne uruchomienie | uruchomic ponownie`},
	{"delete", 0.7, `delete | deletes | deleting | remove | removes | removing | removed | eliminar | elimino | elimine | eliminado | borrar | borro | loschen | losche | entfernen | entfernt | supprimer | supprime | supprimee | excluir | exclui | excluido | apagar | apaguei | eliminare | elimino | eliminato | rimuovere | rimosso | verwijderen | verwijderd | verwijdert | usunac | usuniet* | usuwa* | usunal*`},
	{"unlink", 1, `unlink* | unpair* | unregister* | deregister* | disconnect device | desvincul* | entkoppel* | dissocier | dissocie | scollega* | ontkoppel* | odlacz* | odparow*`},
	{"hidden", 0.8, `hidden | hide | hides | hiding | invisible | not visible | oculto | oculta | ocultos | ocultar | se oculta | versteckt | verstecken | unsichtbar | cachee | cachees | invisibles | escondid* | esconder | nascost* | nascondere | invisibil* | verborgen | verbergen | onzichtbaar | ukryt* | ukrywa* | niewidoczn*`},
	{"visible", 0.5, `visible | visibility | sichtbar | sichtbarkeit | visibilite | visivel | visibilidade | visibile | visibilita | zichtbaar | zichtbaarheid | widoczn* | visibilidad`},
	{"scroll", 0.8, `scroll* | desplaz* | scrollen | gescrollt | defiler | defilement | rolar | rolagem | scorrere | scorrimento | scorro | przewija* | przewin*`},
	{"tab", 0.7, `tab | tabs | pestana | pestanas | reiter | registerkarte* | onglet | onglets | aba | abas | scheda | schede | tabblad* | zakladk*`},
	{"window", 0.6, `window | popup | popups | pop up | pop ups | dialog | dialogs | dialogue | modal | ventana | ventanas | fenster | fenetre | fenetres | janela | janelas | finestra | finestre | venster | vensters | okno | okna | okienk*`},
	{"menu", 0.5, `menu | menus | menue`},
	{"link", 0.7, `link | links | linked | hyperlink* | enlace | enlaces | verlinkung | lien | liens | collegamento | collegamenti | koppeling | linki | linku | odnosnik*`},
	{"copy", 0.8, `copy | copied | copying | paste | pasted | pasting | clipboard | copiar | copie | pegar | kopieren | kopiert | einfugen | zwischenablage | copier | coller | presse papier | colar | copiei | area de transferencia | copiare | copiato | incollare | kopieer | plakken | klembord | kopiowa* | skopiowa* | wklej* | schowek`},
	{"cancel", 0.8, `cancel | cancels | cancelled | canceled | cancelling | canceling | cancellation | cancelar | cancelado | cancelada | cancelacion | stornier* | storno | abbrechen | abgebrochen | annuler | annule | annulee | annulation | cancelamento | annullare | annullato | annullata | annuleren | geannuleerd | anulowa* | anuluj* | anulacja`},
	{"retry", 0.7, `retry | retries | retried | retrying | try again | reintentar | reintento | volver a intentar | erneut versuchen | nochmal versuchen | reessayer | ressayer | tentar novamente | tentar de novo | riprovare | riprova | opnieuw proberen | sprobuj ponownie | ponowic`},
	{"undo", 1, `undo | undone | deshacer | ruckgangig | rueckgaengig | desfazer | ongedaan maken | cofnij | cofnac | cofniecie | annulla modifica`},
	{"zoom", 1, `zoom* | pinch | ampliar | vergrossern | vergroten | powieksz* | ingrandire`},
	{"font", 0.8, `font | fonts | typeface | tipo de letra | schriftart* | schriftgrosse | police d ecriture | fonte | fontes | carattere | caratteri | lettertype | czcionk*`},
	{"field", 0.6, `field | fields | input | inputs | textbox | text box | campo | campos | feld | felder | eingabefeld | champ | champs | veld | velden | invoerveld | pole tekstowe | pola`},
	{"form", 0.6, `form | forms | formulario* | formular | formulare | formulaire* | modulo | moduli | formulier* | formularz*`},
	{"control", 1, `dropdown | drop down | checkbox | check box | radio button | desplegable | casilla | kontrollkastchen | auswahlliste | case a cocher | menu deroulant | caixa de selecao | lista suspensa | casella di controllo | menu a tendina | selectievakje | keuzelijst | pole wyboru | lista rozwijana`},
	{"gesture", 1, `swipe | swipes | swiping | swiped | gesture* | gesto | gestos | geste | gesten | wischen | wischgeste | deslizar | deslizo | glisser | balayer | scorri | veegbeweging | vegen | przesun* | gest | gesty | drag | dragging | dragged | drag and drop | arrastrar | arrastar | trascinare | slepen | przeciag*`},
	{"color", 0.8, `colour | colours | color | colors | colores | farbe | farben | couleur | couleurs | cores | colore | colori | kleur | kleuren | kolor | kolory | koloru`},
	{"size", 0.6, `size | sizes | tamano | tamanho | groesse | taille | dimensione | dimensioni | grootte | rozmiar*`},
	{"text", 0.4, `text | texts | texto | textos | texte | textes | testo | testi | tekst | teksty | tekstu`},
	{"rotation", 1, `rotate* | rotation | landscape | portrait | girar la pantalla | rotacion | querformat | hochformat | paysage | rotacao | paisagem | retrato | orizzontale | verticale | rotazione | orientamento | orientation | orientacion | liggend | staand | obrot ekranu | orientacja | poziomo | pionowo`},
	{"device", 0.3, `device | devices | dispositivo | dispositivos | dispositivi | gerat | geraet | gerate | geraete | appareil | appareils | apparaat | apparaten | urzadzeni* | urzadzen`},
	{"phone", 0.3, `phone | phones | smartphone* | telefono | telefonos | telefon | telefonu | telefonie | telephone | telefone | telefones | telefoon | telefoons | mobiel | komorka | komorce`},
	{"tablet", 0.8, `tablet* | ipad* | tableta* | tablette*`},
	{"smartwatch", 1, `smartwatch* | apple watch | wear os | reloj inteligente | montre connectee | relogio inteligente | orologio smart | zegarek`},
	{"web", 0.7, `browser* | web app | web version | website | web site | webseite | site web | sito web | sitio web | navegador | navigateur | versao web | version web | przegladark* | strona internetowa `},
	{"desktop", 0.7, `desktop | desktops | escritorio | bureau | area de trabalho | ambiente de trabalho | desktopversie | pulpitu`},
	{"microphone", 1, `microphone* | mic | microfono | mikrofon* | microfone | microfoon`},
	{"voice", 1, `voice | dictation | speech | voz | dictado | sprachnachricht* | stimme | spracheingabe | voix | dictee | ditado | voce | dettatura | spraak | stem | glos | glosowe | glosowa`},
	{"emoji", 1, `emoji* | emoticon* | sticker*`},
	{"subtitle", 1, `subtitle* | caption* | subtitulo* | untertitel* | sous titre* | legenda* | sottotitol* | ondertitel* | napisy`},
	{"comment", 1, `comments | commented | commenting | a comment | comentario* | kommentar* | commentaire* | commento | commenti | opmerking* | reactie* | komentarz*`},
	{"review", 0.8, `review | reviews | rating | ratings | resena* | bewertung* | rezension* | les avis | avis client* | avaliac* | recension* | recensie* | beoordeling* | recenzj* | ocena | oceny`},
	{"friend", 0.8, `friend* | amigo | amigos | amiga | amigas | freund | freunde | freundin | amis | amie | amies | amici | amico | amica | vriend* | znajom* | przyjaci*`},
	{"follow", 1, `followers | follower | seguidores | abonnenten | abonnes | volgers | obserwujac*`},
	{"invite", 1, `invite* | invitation* | invitar | invitacion* | einlad* | eingeladen | inviter | convid* | invito | invitare | inviti | uitnodig* | zaprosz* | zaprosi*`},
	{"group", 0.8, `group* | grupo* | gruppe* | groupe* | gruppo | gruppi | groep* | grupa | grupy | grupie`},
	{"currency", 1, `currency | currencies | exchange rate* | moneda | monedas | divisa* | tipo de cambio | wahrung* | wechselkurs* | devise* | taux de change | moeda* | cambio de moeda | taxa de cambio | valuta* | tasso di cambio | wisselkoers* | walut* | kurs wymiany`},
	{"fee", 1, `fee | fees | comision | comisiones | gebuhr* | gebuehr* | frais | tarifa* | taxa | taxas | commissione | commissioni | kosten | transactiekosten | oplat* | prowizj*`},
	{"limit", 0.8, `limit* | limite* | limiet* | quota* | cuota* | rate limit | obergrenze | plafond | plafon*`},
	{"expire", 1, `expir* | expire | expiry | caducad* | caduca | vencid* | vencimiento | venceu | abgelaufen | lauft ab | ablaufdatum | scadut* | scadenza | scade | verlopen | verloopt | wygasl* | wygasa | wygasni*`},
	{"session", 0.8, `session | sessions | sesion | sesiones | sitzung* | sessao | sessoes | sessione | sessioni | sessie | sessies | sesja | sesji | sesje`},
	{"memory", 0.8, `memory | ram | memoria | memorias | arbeitsspeicher | speicher | memoire | memorie | geheugen | pamiec | pamieci`},
	{"cpu", 1, `cpu | processor | procesador | prozessor | processeur | processador | processore | procesor | prozessorlast`},
	{"cache", 1, `cache | cached | caching | caches | cache leeren | vider le cache | limpar cache | svuotare la cache | pamiec podreczna`},
	{"database", 1, `database | databases | base de datos | datenbank* | base de donnees | banco de dados | base di dati | baza danych | bazy danych`},
	{"request", 0.4, `request | requests | requested | solicitud | solicitudes | anfrage | anfragen | requete | requetes | requisicao | solicitacao | richiesta | richieste | verzoek | verzoeken | zapytanie | zapytania | zgloszeni*`},
	{"response", 0.4, `response | responses | respuesta | respuestas | antwort | antworten | reponse | reponses | resposta | respostas | risposta | risposte | antwoord | antwoorden | odpowiedz | odpowiedzi`},
	{"env_var", 1, `environment variable* | env var* | envvar* | variable de entorno | variables de entorno | umgebungsvariable* | variable d environnement | variables d environnement | variavel de ambiente | variaveis de ambiente | variabile d ambiente | variabili d ambiente | omgevingsvariabele* | zmienna srodowiskowa | zmienne srodowiskowe`},
	{"deploy", 1, `deploy | deploys | deployed | deploying | deployment* | despliegue* | desplegar | desplegado | bereitstellung* | bereitgestellt | deploiement* | deployer | deploye | implantacao | implantar | rilascio in produzione | uitrol* | uitgerold | wdrozeni* | wdrozyc | wdrozon*`},
	{"dashboard", 0.8, `dashboard* | panel de control | tablero | tableau de bord | painel | cruscotto | pannello di controllo | pulpit`},
	{"chart", 1, `chart | charts | graph | graphs | grafico | graficos | grafica | grafici | diagramm* | graphique* | grafiek* | wykres*`},
	{"statistics", 1, `statistic* | stats | estadistica* | statistik* | statistique* | estatistica* | statistiche | statistieken | statystyk* | analytics | analitica`},
	{"budget", 1, `budget* | presupuesto* | orcamento* | budzet*`},
	{"category", 0.8, `categor* | kategor*`},
	{"tag", 0.8, `tag | tags | tagged | tagging | label | labels | labeled | labelled | etiqueta* | etikett* | etiquette* | etichett* | etiket* | etykiet*`},
	{"address", 0.6, `address | addresses | direccion | direcciones | adresse | adressen | adresses | endereco | enderecos | indirizzo | indirizzi | adres | adressen | adresu`},
	{"phone_number", 1, `phone number | telephone number | mobile number | numero de telefono | numero de movil | telefonnummer | handynummer | numero de telephone | numero de portable | numero de telefone | numero de celular | numero di telefono | numero di cellulare | telefoonnummer | numer telefonu`},
	{"name", 0.4, `name | names | username | user name | nombre de usuario | benutzername | nom d utilisateur | nome de usuario | nome utente | gebruikersnaam | nazwa uzytkownika | nazwisko | imie i nazwisko | apellido | nachname | vorname | prenom | sobrenome | cognome | achternaam | voornaam`},
	{"id_document", 1, `passport | id card | identity document | pasaporte | documento de identidad | reisepass | personalausweis | ausweis | passeport | carte d identite | piece d identite | passaporte | documento de identidade | passaporto | carta d identita | documento d identita | paspoort | identiteitskaart | paszport | dowod osobisty | selfie*`},
	{"folder", 0.9, `folder | folders | carpeta | carpetas | ordner | dossier | dossiers | cartella | cartelle | directory | directories | directorio* | verzeichnis* | repertoire | diretorio*`},
	{"import", 1, `import | imports | imported | importing | importar | importado | importacion | importieren | importiert | importer | importation | importacao | importare | importato | importazione | importeren | geimporteerd | importowac | importowanie | importu`},
	{"spreadsheet", 1, `spreadsheet* | csv | excel | xlsx | hoja de calculo | tabellenkalkulation | tableur | planilha* | foglio di calcolo | rekenblad | arkusz kalkulacyjny`},
	{"support", 0.3, `support | customer service | help desk | helpdesk | ayuda | soporte | atencion al cliente | hilfe | kundendienst | kundenservice | service client | assistance | ajuda | suporte | atendimento | aiuto | assistenza | hulp | klantenservice | ondersteuning | pomoc | wsparci* | obsluga klienta`},
	{"wallet", 1, `wallet* | apple pay | google pay | gpay | samsung pay | billetera* | monedero* | portefeuille* | carteira* | portafoglio | portafogli | portemonnee | portfel*`},
	{"contactless", 1, `nfc | contactless | tap to pay | sin contacto | kontaktlos | sans contact | sem contato | sem contacto | senza contatto | contactloos | zblizeniow*`},
	{"atm", 1, `cash machine | cashpoint | cajero | cajeros | geldautomat* | distributeur* | caixa eletronico | multibanco | bancomat | geldautomaat | pinautomaat | bankomat*`},
	{"pin", 0.8, `pin | pin code | pincode | codigo pin | code pin | codice pin | kod pin`},
	{"block", 0.8, `block | blocks | blocked | blocking | unblock* | lock | locks | locked | unlock* | bloquear | bloqueo | desbloquear | desbloqueo | sperren | gesperrt | sperre | entsperr* | bloquer | debloquer | debloque* | bloqueio | desbloqueio | bloccare | sbloccare | sbloccat* | blokkeren | geblokkeerd | blokkering | deblokkeren | ontgrendel* | vergrendel* | zablokow* | blokad* | odblokow* |
		unfreeze* | unfrozen | freeze card | frozen card | card freeze | congelar tarjeta | karte einfrieren | geler la carte | congelar cartao | congelare la carta | kaart bevriezen | zamroz*`},
	{"available", 0.5, `available | availability | disponible | disponibles | disponibilidad | verfugbar | verfugbarkeit | disponibilite | disponivel | disponibilidade | disponibile | disponibili | disponibilita | beschikbaar | beschikbaarheid | dostepn*`},
	{"unavailable", 0.8, `unavailable | not available | no disponible | nicht verfugbar | indisponible | nao disponivel | indisponivel | non disponibile | niet beschikbaar | niedostepn* | down for | outage | ausfall | panne | awaria serwera`},
	{"success", 0.5, `success | successful | successfully | succeeded | exito | exitoso | exitosa | erfolgreich | erfolg | succes | reussi | reussie | sucesso | sucedido | successo | riuscito | riuscita | gelukt | geslaagd | sukces | powiodl* | pomyslnie`},
	{"instant", 0.4, `instant | instantly | immediately | instantaneo | instantanea | inmediato | inmediatamente | sofort | sofortig | instantane | instantanee | immediatement | imediato | imediatamente | istantaneo | istantanea | immediato | immediatamente | meteen | onmiddellijk | natychmiast*`},
	{"recurring", 1, `recurring | recurrent | standing order | repeat payment | orden permanente | pago recurrente | dauerauftrag* | virement permanent | prelevement recurrent | ordem permanente | pagamento recorrente | ordine permanente | pagamento ricorrente | periodieke overboeking | doorlopende opdracht | zlecenie stale | platnosc cykliczna`},
	{"autofill", 1, `autofill | auto fill | autocomplete | autocompletar | autocompletado | autovervollstandig* | automatisch ausfullen | saisie automatique | remplissage automatique | preenchimento automatico | compilazione automatica | completamento automatico | automatisch aanvullen | autouzupelnian*`},
	{"favorite", 1, `favori* | favourite* | favorit* | preferit* | ulubion* | wishlist* | wish list | lista de deseos | wunschliste | liste de souhaits | lista de desejos | lista dei desideri | verlanglijst* | lista zyczen`},
	// Feature areas a component is often named for (goals, streaks,
	// challenges, rankings, integrations, parental controls, sellers,
	// products, sleep, savings, the command line): CODEOWNERS names read
	// through these, so a component with no tickets is still recognised
	// in a report in any of the languages.
	{"goal", 1, `goal | goals | daily goal | step goal | objetivo | objetivos | meta diaria | metas | ziel | ziele | tagesziel | schrittziel | objectif | objectifs | obiettivo | obiettivi | doel | doelen | dagdoel | cel | cele | celu`},
	{"streak", 1, `streak | streaks | racha | rachas | tagesserie | tage in folge | jours d affilee | jours consecutifs | dias seguidos | dias consecutivos | sequencia de dias | giorni consecutivi | giorni di fila | dagen op rij | dagen achter elkaar | dni z rzedu | seria dni`},
	{"reward", 1, `badge | badges | achievement* | trophy | trophies | medal | medals | insignia | insignias | logro | logros | trofeo* | abzeichen | trophae* | errungenschaft* | medaille* | conquista* | medalha* | trofeu* | medaglia | medaglie | odznak* | osiagnieci*`},
	{"challenge", 1, `challenge | challenges | reto | retos | desafio | desafios | herausforderung* | wettkampf* | defi | defis | sfida | sfide | uitdaging* | wyzwani*`},
	{"ranking", 1, `leaderboard* | ranking* | clasificacion | tabla de clasificacion | bestenliste | rangliste | classement | classificacao | classifica | ranglijst | klassement | tabela wynikow`},
	{"integration", 1, `integration* | integrat* | third party | 3rd party | connected app | connected apps | connected services | linked apps | partner app* | integracion* | de terceros | aplicaciones conectadas | drittanbieter* | verbundene apps | application tierce | applications tierces | integracao | integracoes | de terceiros | apps conectados | integrazion* | terze parti | app collegate | integratie* | externe app* | integracj* | zewnetrzn*`},
	{"health", 0.8, `health | healthkit | apple health | google fit | health connect | samsung health | salud | gesundheit* | sante | saude | salute | gezondheid* | zdrowie | zdrowia`},
	{"parental", 1, `parental* | parental control* | child account | kids mode | kid mode | children | my kids | my child | control parental | controles parentales | ninos | kindersicherung | jugendschutz | elternkontrolle | meine kinder | controle parental | controle parentale | mes enfants | criancas | controllo parentale | bambini | ouderlijk toezicht | kinderen | kontrola rodzicielska | dzieci`},
	{"seller", 1, `seller | sellers | merchant | merchants | vendedor | vendedores | verkaufer* | vendeur | vendeurs | venditore | venditori | verkoper | verkopers | sprzedawc* | sprzedajac*`},
	{"product", 0.6, `product | products | producto | productos | produkt | produkte | produit | produits | produto | produtos | prodotto | prodotti | produkty | produktu`},
	{"sleep", 1, `sleep | sleeping | slept | sueno | dormir | schlaf* | sommeil | sonno | dormire | slaap* | spanie | snu`},
	{"savings", 1, `savings | savings account | ahorro* | sparen | sparkonto | ersparnis* | epargne | poupanca | risparmi* | spaarrekening | spaargeld | oszczednos*`},
	{"command_line", 1, `cli | command line | commandline | terminal | linea de comandos | kommandozeile | befehlszeile | ligne de commande | linha de comando | riga di comando | opdrachtregel | wiersz polecen`},
	{"subscription", 1, `rinnov* | renouvel* | abbonar* | abbonat* | abonnier* | suscrib* | suscrit* | verlangerung | renovacion | renovacao | odnowieni*`},
	{"smartwatch", 1, `watch face | watch faces | watchface* | cadran | cadrans | montre | montres | zifferblatt* | reloj | relojes | esfera del reloj | relogio | relogios | mostrador do relogio | orologio | quadrante | wijzerplaat | tarcza zegarka`},
	{"rotation", 1, `horizontal | horizontale | horizontales | horizontalement | verticalement | en hauteur | en largeur | sideways | on its side | upside down | gedreht | girad* | ruotat* | rodad*`},
	{"review", 0.8, `star | stars | estrella | estrellas | stern | sterne | etoile | etoiles | estrela | estrelas | sterren | gwiazdk*`},
	{"message", 1, `conversation | conversations | conversacion | conversaciones | conversa | conversas | conversazione | conversazioni | unterhaltung | unterhaltungen | konversation* | gesprek | gesprekken | rozmowa | rozmowy | rozmowe | rozmowie`},
	// Harm intake must never drop (category): money that left but never
	// arrived, and an account the user cannot get into at all.
	{"not_received", 1, `never receives | never receive | doesnt receive | does not receive | hasnt received | has not received | havent received | have not received | never arrives | never arrive | didnt arrive | did not arrive | hasnt arrived | has not arrived | never reached | never reaches | never came through | never went through |
		nunca recibe | nunca recibio | nunca recibi | no ha recibido | no recibe | nunca llega | nunca llego | nunca le llega | nunca le llego | no le llega | no le llego |
		kommt nie an | kam nie an | nie angekommen | nicht angekommen | kommt nicht an | kam nicht an | nie bekommen | hat nichts bekommen | hat nie etwas erhalten |
		n a jamais recu | n ont jamais recu | ne recoit pas | ne recoit jamais | jamais arrive | jamais arrivee | pas arrive | pas arrivee | n est jamais arrive | n est jamais arrivee |
		nunca chegou | nunca chega | nao chegou | nao recebeu | nunca recebeu | nao recebe |
		non e mai arrivato | non e mai arrivata | non arriva mai | mai arrivato | mai arrivata | non ha ricevuto | non ha mai ricevuto | non riceve |
		nooit ontvangen | niet ontvangen | nooit aangekomen | niet aangekomen | komt nooit aan | komt niet aan |
		nie otrzymal* | nigdy nie otrzymal* | nie dotarl* | nigdy nie dotarl* | nie doszedl | nie doszly | nie doszla | nie doszlo`},
	{"lockout", 1, `lock my account | locks my account | locked my account | locking my account | blocked my account | blocks my account | suspended my account |
		cant get into my account | cannot get into my account | can not get into my account | cant get in to my account | cannot get in to my account | cant access my account | cannot access my account | can not access my account | no access to my account | lost access to my account | cant log into my account | cannot log into my account | cant sign into my account | cannot sign into my account |
		no puedo entrar a mi cuenta | no puedo entrar en mi cuenta | no puedo acceder a mi cuenta | sin acceso a mi cuenta | me bloqueo la cuenta | me bloquearon la cuenta | bloqueo mi cuenta |
		komme nicht in mein konto | komme nicht mehr in mein konto | kein zugriff auf mein konto | kann nicht auf mein konto zugreifen | kann nicht mehr auf mein konto zugreifen | mein konto gesperrt | hat mein konto gesperrt |
		impossible d acceder a mon compte | je ne peux plus acceder a mon compte | je ne peux pas acceder a mon compte | plus acces a mon compte | bloque mon compte | a bloque mon compte |
		nao consigo entrar na minha conta | nao consigo acessar minha conta | nao consigo acessar a minha conta | sem acesso a minha conta | bloqueou minha conta | bloqueou a minha conta |
		non riesco ad accedere al mio account | non riesco ad entrare nel mio account | non riesco a entrare nel mio account | non posso accedere al mio account | ha bloccato il mio account |
		kan niet in mijn account | kom niet in mijn account | kan niet meer in mijn account | geen toegang tot mijn account | mijn account geblokkeerd |
		nie mam dostepu do konta | nie mam dostepu do mojego konta | nie moge wejsc na konto | nie moge wejsc na moje konto | zablokowal* moje konto`},
	// Harm that calming words cannot soften (severity): data written over
	// or corrupted is lost data; a value multiplied or divided is a wrong
	// value; private data and secrets reach an audience that should not
	// see them ("audience" weighs little: it only counts together with a
	// secret or private data).
	{"data_loss", 1, `overwritten | overwrote | overwrites | overwriting | got replaced | were replaced | was replaced | sobrescrit* | sobreescrit* | corrompid* | corrupt* | wurde uberschrieben | wurden uberschrieben | uberschrieben worden | ist uberschrieben | sind uberschrieben | ecrase | ecrases | ecrasee | ecrasees | corrompu | corrompue | corrompus | sovrascritt* | dati corrotti | file corrotti | file corrotto | sono corrotti | worden overschreven | werd overschreven | zijn overschreven | is overschreven | beschadigd | zostaly nadpisane | zostal nadpisany | zostalo nadpisane | uszkodzon*`},
	{"wrong", 0.6, `multiplied by | divided by | extra zero | extra zeros | zero too many | multiplicad* | multipliziert | geteilt durch | multiplie par | multiplies par | multipliee par | divise par | moltiplicat* | diviso per | vermenigvuldigd | gedeeld door | pomnozon* | podzielon*`},
	{"private", 1, `personal data | personal information | personal details | private data | private information | private details | private messages | home address | phone number | phone numbers | email address | email addresses | date of birth | social security number | ssn | card number | card numbers | card details | medical records | health data |
		datos personales | informacion personal | datos privados | numero de telefono | numero de tarjeta | personliche daten | personlichen daten | persoenliche daten | persoenlichen daten | personenbezogene daten | private daten | telefonnummer | kartennummer | donnees personnelles | informations personnelles | donnees privees | numero de carte |
		dados pessoais | informacoes pessoais | dados privados | numero do cartao | dati personali | informazioni personali | dati privati | numero di telefono | numero della carta | persoonsgegevens | persoonlijke gegevens | prive gegevens | dane osobowe | dane prywatne | numer telefonu | numer karty`},
	{"audience", 0.2, `other users | other user | other people | other peoples | other customers | other accounts | other members | other tenants | other projects | other teams | other organizations | other workspaces | another user | another customer | another account | someone else | somebody else | strangers | the public | publicly | anyone | anybody | everyone | everybody | viewers | guests | guest users | read access | read only | read only access |
		otros usuarios | otras personas | otros clientes | otra persona | cualquiera | todo el mundo | publicamente | andere nutzer | andere benutzer | andere kunden | andere personen | jemand anderes | jemand anders | fremde | jeder | offentlich | d autres utilisateurs | autres utilisateurs | autres clients | quelqu un d autre | n importe qui | tout le monde | publiquement |
		outros usuarios | outros utilizadores | outras pessoas | outros clientes | outra pessoa | qualquer um | qualquer pessoa | todo mundo | publicamente | altri utenti | altre persone | altri clienti | qualcun altro | chiunque | pubblicamente | andere gebruikers | andere mensen | andere klanten | iemand anders | iedereen | openbaar | inni uzytkownicy | innych uzytkownikow | inne osoby | ktos inny | kazdy | wszyscy | publicznie`},
}

// pat is one word of a lexicon form.
type pat struct {
	s      string
	prefix bool
}

type phrase struct {
	pats []pat
	ids  []string
}

type concept struct {
	id   string
	spec float64
}

type lexiconIndex struct {
	byFirst       map[string][]phrase // first word exact
	byFirstPrefix map[string][]phrase // first word is a prefix pattern
	maxPrefix     int
	concepts      map[string]concept
	single        []phrase            // one-word forms, for typo matching
	singleGrams   map[string][]int    // trigram → indexes into single
	romance       map[string][]string // romanceKey of one-word forms → concepts (nil when ambiguous)
}

var lex = buildLexicon()

func buildLexicon() *lexiconIndex {
	l := &lexiconIndex{byFirst: map[string][]phrase{}, byFirstPrefix: map[string][]phrase{}, concepts: map[string]concept{},
		singleGrams: map[string][]int{}, romance: map[string][]string{}}
	// A form listed under several concepts ("credit card": a charge and a
	// card) yields all of them.
	var forms []phrase
	index := map[string]int{}
	for _, e := range lexiconTable {
		// A concept listed again (to add languages) keeps the spec of
		// its first entry.
		if _, ok := l.concepts[e.id]; !ok {
			l.concepts[e.id] = concept{id: e.id, spec: e.spec}
		}
		for _, form := range strings.Split(e.forms, "|") {
			var pats []pat
			for _, w := range strings.Fields(form) {
				pre := strings.HasSuffix(w, "*")
				toks := tokenize(strings.TrimSuffix(w, "*"))
				for i, t := range toks {
					pats = append(pats, pat{s: t.s, prefix: pre && i == len(toks)-1})
				}
			}
			if len(pats) == 0 {
				continue
			}
			key := fmt.Sprint(pats)
			if i, ok := index[key]; ok {
				forms[i].ids = appendUnique(forms[i].ids, e.id)
				continue
			}
			index[key] = len(forms)
			forms = append(forms, phrase{pats: pats, ids: []string{e.id}})
		}
	}
	for _, ph := range forms {
		pats := ph.pats
		if len(pats) == 1 && !pats[0].prefix {
			if k := romanceKey(pats[0].s); k != "" {
				if old, ok := l.romance[k]; ok && !slices.Equal(old, ph.ids) {
					l.romance[k] = nil
				} else {
					l.romance[k] = ph.ids
				}
			}
		}
		if len(pats) == 1 && len(pats[0].s) >= 5 {
			for _, g := range trigrams(pats[0].s) {
				l.singleGrams[g] = append(l.singleGrams[g], len(l.single))
			}
			l.single = append(l.single, ph)
		}
		if pats[0].prefix {
			l.byFirstPrefix[pats[0].s] = append(l.byFirstPrefix[pats[0].s], ph)
			l.maxPrefix = max(l.maxPrefix, len(pats[0].s))
		} else {
			l.byFirst[pats[0].s] = append(l.byFirst[pats[0].s], ph)
		}
	}
	for _, m := range []map[string][]phrase{l.byFirst, l.byFirstPrefix} {
		for k, v := range m {
			sort.SliceStable(v, func(i, j int) bool { return len(v[i].pats) > len(v[j].pats) })
			m[k] = v
		}
	}
	return l
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func (p pat) matches(w string) bool {
	if p.prefix {
		return strings.HasPrefix(w, p.s)
	}
	return w == p.s
}

// match returns the concepts of the longest lexicon form starting at
// words[i] and how many words it covers (0 when none).
func (l *lexiconIndex) match(words []string, i int) ([]string, int) {
	w := words[i]
	var best []string
	bestN := 0
	try := func(phs []phrase) {
		for _, ph := range phs {
			n := len(ph.pats)
			if n <= bestN || i+n > len(words) {
				continue
			}
			ok := true
			for j := 1; j < n; j++ {
				if !ph.pats[j].matches(words[i+j]) {
					ok = false
					break
				}
			}
			if ok && ph.pats[0].matches(w) {
				best, bestN = ph.ids, n
			}
		}
	}
	try(l.byFirst[w])
	for n := min(len(w), l.maxPrefix); n >= 2; n-- {
		if phs, ok := l.byFirstPrefix[w[:n]]; ok {
			try(phs)
		}
	}
	if bestN == 0 {
		if ids := l.romance[romanceKey(w)]; len(ids) > 0 {
			return ids, 1
		}
	}
	return best, bestN
}

// romanceKey drops a plural "s" and a final vowel, the endings by which
// Spanish, Portuguese and Italian inflect gender and number ("vuote",
// "vuoto", "pagine", "pagina" → "vuot", "pagin"), so the lexicon need not
// list every form. Words shorter than five letters have no key.
func romanceKey(w string) string {
	if len(w) < 5 || !isAlpha(w) {
		return ""
	}
	k := strings.TrimSuffix(w, "s")
	if n := len(k); n > 0 && strings.IndexByte("aeiou", k[n-1]) >= 0 {
		k = k[:n-1]
	}
	if len(k) < 4 || k == w {
		return ""
	}
	return k
}

// conceptsOfName reads a component or identifier name such as "photosync",
// "in-app-purchases" or "Payments" as concepts: it is split into words, and
// a single word that the lexicon does not know is broken into lexicon words
// where that covers it entirely ("photosync" → photo + sync).
func conceptsOfName(name string) []string {
	var out []string
	words := splitIdent(name)
	a := analyzeTokens(toTokens(words), false)
	for t := range a.bag {
		if isConcept(t) {
			out = appendUnique(out, t)
		}
	}
	for _, w := range words {
		for _, part := range wordBreak(w) {
			ids, _ := lex.match([]string{part}, 0)
			for _, id := range ids {
				out = appendUnique(out, "~"+id)
			}
		}
	}
	sort.Strings(out)
	return out
}

func toTokens(words []string) []token {
	out := make([]token, len(words))
	for i, w := range words {
		out[i] = token{s: w, num: isDigits(w)}
	}
	return out
}

// wordBreak splits w into words the lexicon knows (each at least three
// letters), or returns nil when no full split exists.
func wordBreak(w string) []string {
	n := len(w)
	if n < 6 {
		return nil
	}
	prev := make([]int, n+1)
	for i := range prev {
		prev[i] = -1
	}
	prev[0] = 0
	for i := 0; i < n; i++ {
		if prev[i] < 0 {
			continue
		}
		for j := i + 3; j <= n; j++ {
			if prev[j] >= 0 || (i == 0 && j == n) {
				continue
			}
			if _, n := lex.match([]string{w[i:j]}, 0); n == 1 {
				prev[j] = i
			}
		}
	}
	if prev[n] < 0 {
		return nil
	}
	var parts []string
	for j := n; j > 0; j = prev[j] {
		parts = append([]string{w[prev[j]:j]}, parts...)
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

// fuzzy returns the concepts of the one-word lexicon form a misspelt word
// nearly spells: same first letter, within one edit (insertion, deletion,
// substitution or swap of neighbours) for words of six to eight letters,
// two from nine; a prefix form ("notification*") must be within one edit
// of the word's beginning. Candidates come from a trigram index of the
// forms, and answers are memoised (a tracker repeats its words).
func (l *lexiconIndex) fuzzy(w string) []string {
	if len(w) < 6 || !isAlpha(w) {
		return nil
	}
	if v, ok := fuzzyMemo.Load(w); ok {
		return v.([]string)
	}
	ids := l.fuzzySlow(w)
	if fuzzyMemoN.Add(1) < fuzzyMemoMax {
		fuzzyMemo.Store(w, ids)
	}
	return ids
}

var (
	fuzzyMemo    sync.Map
	fuzzyMemoN   atomic.Int64
	fuzzyMemoMax = int64(500_000)
)

func (l *lexiconIndex) fuzzySlow(w string) []string {
	limit := 1
	if len(w) >= 9 {
		limit = 2
	}
	seen := map[int]bool{}
	best, bestD := -1, limit+1
	for _, g := range trigrams(w) {
		for _, i := range l.singleGrams[g] {
			if seen[i] {
				continue
			}
			seen[i] = true
			p := l.single[i].pats[0]
			if p.s[0] != w[0] {
				continue
			}
			d := editDistance(w, p.s)
			if p.prefix {
				for k := len(p.s) - 1; k <= len(p.s)+1; k++ {
					if k > 0 && k <= len(w) {
						if pd := editDistance(w[:k], p.s); pd <= 1 {
							d = min(d, pd)
						}
					}
				}
			}
			if d < bestD || (d == bestD && best >= 0 && i < best) {
				best, bestD = i, d
			}
		}
	}
	if best < 0 || bestD > limit {
		return nil
	}
	return l.single[best].ids
}

// editDistance is the optimal-string-alignment distance between two
// ASCII-folded words (adjacent swaps count one edit).
func editDistance(a, b string) int {
	if a == b {
		return 0
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// conceptAreas group concepts by what a failure in them costs a user, for
// severity: a cosmetic area (how things look or sound), the core flows an
// app exists for (getting in, paying, keeping data), the concepts that
// hold a user's data, and money.
var conceptAreas = map[string][]string{
	"cosmetic":  {"display", "button", "theme", "accessibility", "language", "localization", "audio", "screen", "vibration", "widget"},
	"core_flow": {"launch", "login", "purchase", "charge", "store", "save", "sync", "account", "transfer", "balance", "subscription", "money"},
	"data":      {"progress", "save", "account", "sync", "note", "file", "balance", "level", "message", "camera", "purchase", "money", "statement", "contact", "calendar", "playlist", "streak", "reward"},
	"money":     {"charge", "purchase", "transfer", "balance", "subscription", "money", "price", "card"},
}

// inArea lists the concepts of a bag that belong to an area, in the
// area's order.
func inArea(bag terms, area string) []string {
	var out []string
	for _, c := range conceptAreas[area] {
		if bag["~"+c] > 0 {
			out = append(out, c)
		}
	}
	return out
}

// conceptNeighbours are concepts of the same part of an app: a purchase
// happens in a store and is a charge; progress is what a save holds. A
// component named for one is a fair owner of the other.
var conceptNeighbours = map[string][]string{
	"~store":        {"~purchase", "~discount", "~price"},
	"~purchase":     {"~store", "~charge", "~discount", "~price"},
	"~charge":       {"~purchase", "~card", "~subscription", "~price"},
	"~subscription": {"~charge", "~purchase"},
	"~save":         {"~progress", "~sync", "~data_loss"},
	"~sync":         {"~save", "~progress"},
	"~progress":     {"~save", "~sync"},
	"~login":        {"~account", "~signup", "~password", "~biometric", "~logout", "~verification", "~lockout"},
	"~account":      {"~login", "~signup", "~password"},
	"~notification": {"~alarm", "~message"},
	"~camera":       {"~upload", "~file", "~scan"},
	"~scan":         {"~camera", "~file"},
	"~file":         {"~export", "~upload", "~download"},
	"~export":       {"~file"},
	"~transfer":     {"~balance", "~charge", "~recipient"},
	"~delivery":     {"~map"},
	"~map":          {"~delivery"},
	"~audio":        {"~call", "~video"},
	"~video":        {"~audio", "~camera"},
	"~credential":   {"~security", "~password"},
	"~money":        {"~balance", "~transfer"},
	// Feature areas (added with their concepts).
	"~goal":        {"~streak", "~reward"},
	"~streak":      {"~goal", "~reward"},
	"~reward":      {"~goal", "~streak"},
	"~challenge":   {"~friend", "~group", "~ranking", "~invite"},
	"~ranking":     {"~challenge", "~friend"},
	"~integration": {"~export", "~import"},
	"~health":      {"~integration"},
	"~parental":    {"~permission", "~limit"},
	"~sleep":       {"~alarm"},
	"~savings":     {"~balance", "~transfer", "~goal"},
}

// deviceConcepts are the vocabulary's device classes: what a report runs
// on, named whatever its problem.
var deviceConcepts = map[string]bool{"~device": true, "~phone": true, "~tablet": true, "~smartwatch": true, "~desktop": true, "~web": true}

// abbreviations are the general software acronyms a component may be
// named with, read as the words they stand for ("sso" → single sign on).
var abbreviations = map[string]string{
	"sso": "single sign on", "2fa": "two factor", "mfa": "two factor", "otp": "one time code", "auth": "authentication",
	"iam": "permission", "idp": "sign in", "ui": "display button screen", "ux": "display", "gui": "display",
	"api": "server", "iap": "in app purchase", "ota": "update", "ci": "build pipeline", "cd": "deploy",
	"db": "storage", "fs": "file", "i18n": "translation", "l10n": "translation", "a11y": "accessibility",
	"pdf": "document", "qr": "scan", "gps": "location", "kyc": "verification code", "msg": "message", "notif": "notification",
	"pay": "payment", "identity": "sign in", "iot": "bluetooth", "tv": "video", "vod": "video", "cdn": "download", "dm": "message",
}
