package triage

import (
	"strings"
	"testing"
)

// coverProbes are words and short phrases, as a user of any product would
// write them, in each of the eight languages the airlock reads; each must
// read as its concept. Written from general knowledge of the languages,
// not taken from any dataset. Entries are "lang:phrase" separated by ";".
var coverProbes = map[string]string{
	"goal":              "en:my daily goal; es:mi objetivo; de:das Ziel; fr:mon objectif; pt:minhas metas; it:obiettivo; nl:mijn doel; pl:cel dzienny",
	"streak":            "en:my streak; es:mi racha; de:zehn Tage in Folge; fr:cinq jours d'affilée; pt:dias seguidos; it:giorni consecutivi; nl:tien dagen op rij; pl:dni z rzędu",
	"challenge":         "en:the challenge; es:el reto; de:die Herausforderung; fr:le défi; pt:desafio; it:la sfida; nl:de uitdaging; pl:wyzwanie",
	"ranking":           "en:leaderboard; es:clasificación; de:Rangliste; fr:classement; pt:classificação; it:classifica; nl:ranglijst; pl:tabela wyników",
	"integration":       "en:third-party integration; es:aplicaciones de terceros; de:Drittanbieter-Apps; fr:applications tierces; pt:integração; it:integrazione; nl:integratie; pl:integracja",
	"health":            "en:Apple Health; es:datos de salud; de:Gesundheitsdaten; fr:santé; pt:saúde; it:salute; nl:gezondheid; pl:zdrowie",
	"parental":          "en:parental controls; es:control parental; de:Kindersicherung; fr:contrôle parental; pt:controle parental; it:controllo parentale; nl:ouderlijk toezicht; pl:kontrola rodzicielska",
	"seller":            "en:the seller; es:el vendedor; de:der Verkäufer; fr:le vendeur; pt:vendedor; it:il venditore; nl:de verkoper; pl:sprzedawca",
	"product":           "en:the product; es:el producto; de:das Produkt; fr:le produit; pt:o produto; it:il prodotto; nl:het product; pl:produkty",
	"sleep":             "en:sleep tracking; es:el sueño; de:Schlaf; fr:le sommeil; it:il sonno; nl:slaap; pl:spanie",
	"savings":           "en:savings; es:ahorros; de:Sparkonto; fr:épargne; pt:poupança; it:risparmi; nl:spaarrekening; pl:oszczędności",
	"command_line":      "en:command line; es:línea de comandos; de:Kommandozeile; fr:ligne de commande; pt:linha de comando; it:riga di comando; nl:opdrachtregel; pl:wiersz poleceń",
	"crash":             "en:the app crashed; es:se cierra sola; de:die App stürzt ab; fr:l'appli plante; pt:o app fecha sozinho; it:l'app si chiude; nl:de app crasht; pl:aplikacja się wywala",
	"blank_screen":      "en:black screen; es:pantalla negra; de:schwarzer Bildschirm; fr:écran noir; pt:tela preta; it:schermo nero; nl:zwart scherm; pl:czarny ekran",
	"freeze":            "en:it froze; es:se congela; de:friert ein; fr:l'écran se fige; pt:travou; it:si blocca; nl:bevriest; pl:zawiesza się",
	"performance":       "en:really slow; es:muy lento; de:sehr langsam; fr:très lent; pt:lentidão; it:rallentamenti; nl:erg traag; pl:bardzo powolna",
	"error":             "en:an error; es:un error; de:ein Fehler; fr:une erreur; pt:um erro; it:un errore; nl:een foutmelding; pl:błąd",
	"broken":            "en:does not work; es:no funciona; de:funktioniert nicht; fr:ne fonctionne pas; pt:não funciona; it:non funziona; nl:werkt niet; pl:nie działa",
	"unable":            "en:unable to; es:no puedo; de:kann nicht; fr:impossible de; pt:não consigo; it:non riesco; nl:lukt niet; pl:nie mogę",
	"wrong":             "en:incorrect; es:equivocado; de:falsch; fr:erroné; pt:incorreto; it:sbagliato; nl:verkeerde; pl:nieprawidłowy",
	"login":             "en:sign in; es:iniciar sesión; de:anmelden; fr:se connecter; pt:fazer login; it:accesso; nl:inloggen; pl:logowanie",
	"logout":            "en:logged out; es:cerrar sesión; de:abgemeldet; fr:me déconnecte; pt:sair da conta; it:logga fuori; nl:uitgelogd; pl:wylogowuje",
	"disconnect":        "en:disconnected; es:se desconecta; de:Verbindung verloren; fr:se déconnecte; it:si disconnette; nl:verbinding verbroken; pl:rozłącza",
	"account":           "en:my account; es:mi cuenta; de:mein Konto; fr:mon compte; pt:minha conta; it:profilo; nl:profiel; pl:na koncie",
	"password":          "en:password; es:contraseña; de:Passwort; fr:mot de passe; pt:senha; it:password; nl:wachtwoord; pl:hasło",
	"verification":      "en:verification code; es:código de verificación; de:Bestätigungscode; fr:code de vérification; pt:código de verificação; it:codice di verifica; nl:verificatiecode; pl:kod weryfikacyjny",
	"store":             "en:store; es:tienda; de:Shop; fr:boutique; pt:loja; it:negozio; nl:winkel; pl:sklep",
	"purchase":          "en:purchased; es:compré; de:gekauft; fr:acheté; pt:comprei; it:acquistato; nl:gekocht; pl:kupiłem",
	"charge":            "en:payment; es:cobro; de:Zahlung; fr:paiement; pt:pagamento; it:addebito; nl:betaling; pl:płatność",
	"duplicate":         "en:twice; es:dos veces; de:doppelt; fr:deux fois; pt:duas vezes; it:due volte; nl:twee keer; pl:dwa razy",
	"not_received":      "en:never received; es:no recibí; de:nicht erhalten; fr:pas reçu; pt:nunca recebi; it:mai ricevuto; nl:niet ontvangen; pl:nie otrzymałem",
	"data_loss":         "en:disappeared; es:desapareció; de:verschwunden; fr:disparu; pt:sumiu; it:scomparso; nl:verdwenen; pl:zniknęły",
	"progress":          "en:progress; es:progreso; de:Fortschritt; fr:progression; pt:progresso; it:progressi; nl:voortgang; pl:postępy",
	"save":              "en:saving; es:guardar; de:speichern; fr:sauvegarder; pt:salvar; it:salvare; nl:opslaan; pl:zapisać",
	"sync":              "en:sync; es:sincronizar; de:synchronisieren; fr:synchronisation; pt:sincronização; it:sincronizzazione; nl:synchroniseren; pl:synchronizacja",
	"audio":             "en:no sound; es:sin sonido; de:kein Ton; fr:pas de son; pt:sem som; it:suono; nl:geluid; pl:dźwięk",
	"call":              "en:phone call; es:llamada; de:Anruf; fr:appel; pt:chamada; it:chiamata; nl:oproep; pl:rozmowa telefoniczna",
	"return":            "en:takes me back; es:vuelve; de:kommt zurück; fr:revient; pt:volta; it:ritorna; nl:gaat terug; pl:wraca",
	"home_screen":       "en:home screen; es:pantalla de inicio; de:Startbildschirm; fr:écran d'accueil; pt:tela inicial; it:schermata principale; nl:startscherm; pl:ekran główny",
	"launch":            "en:on startup; es:al abrir; de:beim Start; fr:au lancement; pt:ao abrir; it:all'avvio; nl:bij het opstarten; pl:przy starcie",
	"open":              "en:tapping; es:toco; de:tippe; fr:j'ouvre; pt:clico; it:tocco; nl:klikken; pl:otwieram",
	"update":            "en:after the update; es:actualización; de:aktualisiert; fr:mise à jour; pt:atualização; it:aggiornamento; nl:bijwerken; pl:aktualizacja",
	"install":           "en:reinstalled; es:reinstalé; de:neu installiert; fr:installé; pt:instalei; it:disinstallato; nl:geïnstalleerd; pl:zainstalowałem",
	"negative":          "en:negative; es:negativo; de:negativ; fr:négatif; pt:negativo; it:negativo",
	"display":           "en:displayed; es:muestra; de:wird angezeigt; fr:affiché; pt:exibe; it:visualizzato; nl:weergegeven; pl:wyświetla",
	"button":            "en:button; es:botón; de:Knopf; fr:bouton; pt:botão; it:pulsante; nl:knop; pl:przycisk",
	"screen":            "en:screen; es:pantalla; de:Bildschirm; fr:écran; pt:tela; it:schermo; nl:scherm; pl:ekran",
	"private":           "en:my personal data; es:mis datos personales; de:meine persönlichen Daten; fr:mes données personnelles; pt:meus dados pessoais; it:i miei dati personali; nl:mijn persoonsgegevens; pl:moje dane osobowe",
	"audience":          "en:other users can see it; es:otros usuarios lo ven; de:andere Nutzer sehen es; fr:d'autres utilisateurs le voient; pt:outras pessoas veem; it:altri utenti lo vedono; nl:andere gebruikers zien het; pl:inni użytkownicy widzą",
	"settings":          "en:settings; es:ajustes; de:Einstellungen; fr:paramètres; pt:configurações; it:impostazioni; nl:instellingen; pl:ustawienia",
	"notification":      "en:notifications; es:notificaciones; de:Benachrichtigungen; fr:notifications; pt:notificações; it:notifiche; nl:meldingen; pl:powiadomienia",
	"network":           "en:no connection; es:sin conexión; de:keine Verbindung; fr:hors ligne; pt:sem conexão; it:connessione; nl:geen verbinding; pl:brak internetu",
	"battery":           "en:battery; es:batería; de:Akku; fr:batterie; pt:bateria; it:batteria; nl:batterij; pl:bateria",
	"storage":           "en:storage; es:almacenamiento; de:Speicherplatz; fr:stockage; pt:armazenamento; it:archiviazione; nl:opslagruimte; pl:miejsce na dysku",
	"camera":            "en:photos; es:fotos; de:Kamera; fr:appareil photo; pt:galeria; it:immagini; nl:afbeeldingen; pl:zdjęcia",
	"upload":            "en:uploading; es:subir; de:hochladen; fr:téléverser; pt:enviar arquivo; it:caricare; nl:uploaden; pl:przesyłanie",
	"download":          "en:downloads; es:descargar; de:herunterladen; fr:télécharger; pt:baixar; it:scaricare; nl:downloaden; pl:pobieranie",
	"export":            "en:export; es:exportar; de:exportieren; fr:partager; pt:compartilhar; it:condividere; nl:exporteren; pl:eksport",
	"file":              "en:attachment; es:archivo; de:Datei; fr:fichier; pt:arquivo; it:allegato; nl:bestand; pl:plik",
	"filter":            "en:filters; es:filtros; de:filtern; fr:trier; pt:filtro; it:filtri; nl:sorteren; pl:filtrowanie",
	"search":            "en:search; es:buscar; de:Suche; fr:recherche; pt:pesquisa; it:ricerca; nl:zoeken; pl:wyszukiwanie",
	"map":               "en:location; es:ubicación; de:Standort; fr:localisation; pt:localização; it:mappa; nl:locatie; pl:lokalizacja",
	"video":             "en:videos; es:reproducción; de:Wiedergabe; fr:vidéo; pt:reprodução; it:riproduzione; nl:afspelen; pl:odtwarzanie",
	"keyboard":          "en:keyboard; es:teclado; de:Tastatur; fr:clavier; pt:teclado; it:tastiera; nl:toetsenbord; pl:klawiatura",
	"theme":             "en:dark mode; es:modo oscuro; de:Dunkelmodus; fr:mode sombre; pt:modo escuro; it:tema scuro; nl:donkere modus; pl:tryb ciemny",
	"accessibility":     "en:screen reader; es:lector de pantalla; de:Bildschirmleser; fr:lecteur d'écran; pt:leitor de tela; it:lettore di schermo; nl:schermlezer; pl:czytnik ekranu",
	"subscription":      "en:subscription; es:suscripción; de:Abonnement; fr:abonnement; pt:assinatura; it:abbonamento; nl:lidmaatschap; pl:subskrypcja",
	"ads":               "en:ads; es:anuncios; de:Werbung; fr:publicités; pt:propaganda; it:pubblicità; nl:advertenties; pl:reklamy",
	"restore":           "en:restore; es:recuperar; de:wiederherstellen; fr:restaurer; pt:restaurar; it:ripristinare; nl:herstellen; pl:przywrócić",
	"transfer":          "en:transfer; es:transferencia; de:Überweisung; fr:virement; pt:transferência; it:bonifico; nl:overboeking; pl:przelew",
	"balance":           "en:balance; es:saldo; de:Kontostand; fr:solde; pt:saldo; it:saldo; nl:saldo; pl:saldo",
	"card":              "en:card; es:tarjeta; de:Karte; fr:carte bancaire; pt:cartão; it:carta; nl:betaalpas; pl:karta",
	"note":              "en:notes; es:notas; de:Notizen; fr:bloc notes; pt:notas; it:appunti; nl:notities; pl:notatki",
	"calendar":          "en:calendar; es:calendario; de:Kalender; fr:calendrier; pt:agenda; it:calendario; nl:kalender; pl:kalendarz",
	"time":              "en:time zone; es:zona horaria; de:Zeitzone; fr:fuseau horaire; pt:fuso horário; it:mezzanotte; nl:tijdzone; pl:strefa czasowa",
	"language":          "en:language; es:idioma; de:Sprache; fr:langue; pt:tradução; it:lingua; nl:taal; pl:język",
	"email":             "en:e-mail; es:correo; de:E-Mail; fr:courriel; pt:e-mail; it:e-mail; nl:e-mail; pl:mejl",
	"message":           "en:messages; es:mensajes; de:Nachrichten; fr:message; pt:mensagem; it:messaggio; nl:berichten; pl:wiadomości",
	"reward":            "en:rewards; es:recompensa; de:Belohnung; fr:bonus; pt:recompensas; it:premio; nl:beloning; pl:nagroda",
	"level":             "en:level; es:nivel; de:Level; fr:niveau; pt:níveis; it:livello; nl:niveau; pl:poziom",
	"loading":           "en:loading; es:cargando; de:lädt; fr:chargement; pt:carregando; it:caricamento; nl:laadt; pl:wczytuje",
	"bluetooth":         "en:pairing; es:emparejar; de:koppeln; fr:appairage; pt:emparelhar; it:accoppiare; nl:koppelen; pl:parowanie",
	"vibration":         "en:vibration; es:vibración; de:vibrieren; fr:vibration; pt:vibração; it:vibrazione; nl:trilling; pl:wibracje",
	"blank":             "en:empty; es:vacío; de:leer; fr:vide; pt:vazio; it:vuoto; nl:leeg; pl:pusty",
	"permission":        "en:permissions; es:permisos; de:Berechtigung; fr:autorisation; pt:permissão; it:permessi; nl:toestemming; pl:uprawnienia",
	"widget":            "en:widget; es:widget; de:Widget; fr:widget; pt:widget; it:widget; nl:widget; pl:widget",
	"confirm":           "en:confirmation; es:confirmar; de:bestätigen; fr:confirmer; pt:confirmação; it:conferma; nl:bevestigen; pl:potwierdzenie",
	"signup":            "en:sign up; es:registrarme; de:Registrierung; fr:inscription; pt:cadastro; it:registrazione; nl:registreren; pl:rejestracja",
	"delivery":          "en:delivery; es:entrega; de:Lieferung; fr:livraison; pt:entregador; it:consegna; nl:bezorging; pl:dostawa",
	"booking":           "en:booking; es:reserva; de:Buchung; fr:réservation; pt:agendamento; it:prenotazione; nl:reservering; pl:rezerwacja",
	"workout":           "en:workout; es:entrenamiento; de:trainieren; fr:entraînement; pt:treino; it:allenamento; nl:oefeningen; pl:trening",
	"playlist":          "en:songs; es:canciones; de:Lieder; fr:chansons; pt:canções; it:canzoni; nl:afspeellijst; pl:piosenki",
	"contact":           "en:contacts; es:contactos; de:Kontakte; fr:contacts; pt:contatos; it:contatti; nl:contactpersonen; pl:kontakty",
	"edit":              "en:editing; es:editar; de:bearbeiten; fr:modifier; pt:edição; it:modificare; nl:bewerken; pl:edycja",
	"biometric":         "en:fingerprint; es:huella; de:Fingerabdruck; fr:empreinte; pt:impressão digital; it:impronta; nl:vingerafdruk; pl:odcisk palca",
	"statement":         "en:statements; es:extracto; de:Kontoauszug; fr:relevé; pt:extrato; it:estratto conto; nl:afschrift; pl:wyciąg",
	"scan":              "en:scanning; es:escanear; de:scannen; fr:scanner; pt:digitalizar; it:scansione; nl:scannen; pl:skanowanie",
	"alarm":             "en:alarm; es:alarma; de:Wecker; fr:réveil; pt:alarme; it:sveglia; nl:wekker; pl:budzik",
	"feed":              "en:timeline; es:publicaciones; de:Beiträge; fr:publications; pt:postagens; it:pubblicazioni; nl:tijdlijn; pl:wpisy",
	"discount":          "en:coupon; es:descuento; de:Gutschein; fr:remise; pt:desconto; it:sconto; nl:korting; pl:zniżka",
	"price":             "en:amount; es:importe; de:Betrag; fr:montant; pt:preço; it:importo; nl:bedrag; pl:kwota",
	"tax":               "en:taxes; es:impuestos; de:Steuer; fr:TVA; pt:imposto; it:tasse; nl:btw; pl:podatek",
	"localization":      "en:localization; es:localización; de:Lokalisierung; fr:internationalisation; it:localizzazione",
	"security":          "en:leaked; es:vulnerabilidad; de:gehackt; fr:faille; pt:vazamento; it:violazione; nl:beveiliging; pl:wyciek",
	"credential":        "en:api key; es:clave secreta; de:Zugangsdaten; fr:identifiants; pt:credenciais; it:credenziali; nl:inloggegevens; pl:klucz api",
	"lockout":           "en:locked out; es:cuenta bloqueada; de:Konto gesperrt; fr:compte bloqué; pt:conta bloqueada; it:account bloccato; nl:account geblokkeerd; pl:konto zablokowane",
	"unusable":          "en:unusable; es:inutilizable; de:unbrauchbar; fr:inutilisable; pt:inutilizável; it:inutilizzabile; nl:onbruikbaar; pl:bezużyteczna",
	"money":             "en:money; es:dinero; de:Geld; fr:argent; pt:dinheiro; it:soldi; nl:geld; pl:pieniądze",
	"recipient":         "en:recipient; es:destinatario; de:Empfänger; fr:bénéficiaire; pt:destinatário; it:beneficiario; nl:ontvanger; pl:odbiorca",
	"close_word":        "en:closed",
	"log":               "en:logs; es:archivo de log; de:Protokoll; fr:journal; pt:arquivo de log; it:file di log; nl:logboek; pl:logi",
	"mask":              "en:masked; es:enmascarado; de:maskiert; fr:masqué; pt:mascarado; it:mascherato; nl:gemaskeerd; pl:zamaskowany",
	"delay":             "en:delayed; es:con retraso; de:verspätet; fr:en retard; pt:atrasado; it:in ritardo; nl:vertraagd; pl:opóźnienie",
	"toggle":            "en:toggle; es:interruptor; de:Schalter; fr:interrupteur; pt:chave seletora; it:interruttore; nl:schakelaar; pl:przełącznik",
	"pending":           "en:pending; es:pendiente; de:ausstehend; fr:en attente; pt:pendente; it:in attesa; nl:in behandeling; pl:oczekuje",
	"background":        "en:in the background; es:en segundo plano; de:im Hintergrund; fr:en arrière-plan; pt:em segundo plano; it:in background; nl:op de achtergrond; pl:w tle",
	"exit_code":         "en:exit code; es:código de salida; de:Rückgabecode; fr:code de sortie; pt:código de saída; it:codice di uscita; nl:exitcode; pl:kod wyjścia",
	"schedule":          "en:scheduled; es:programada; de:Zeitplan; fr:planifié; pt:agendado; it:pianificato; nl:gepland; pl:zaplanowane",
	"feedback_positive": "en:awesome; es:me encanta; de:großartig; fr:magnifique; pt:incrível; it:bellissimo",
	"periodic":          "en:monthly; es:mensual; de:monatlich; fr:mensuel; pt:mensal; it:mensile; nl:maandelijks; pl:comiesięczny",
	"date":              "en:dated; es:fecha; de:Datum; fr:la date; pt:data errada; it:la data; nl:datum; pl:data transakcji",
	"list":              "en:list; es:lista; de:Liste; fr:liste; pt:listas; it:elenco; nl:lijst; pl:listy",
	"history":           "en:history; es:historial; de:Verlauf; fr:historique; pt:histórico; it:cronologia; nl:geschiedenis; pl:historia",
	"tile":              "en:tiles; es:mosaico; de:Kachel; fr:tuile; pt:mosaicos; it:riquadro; nl:tegel; pl:kafelki",
	"detail":            "en:details; es:detalles; de:Details; fr:détails; pt:detalhes; it:dettagli; nl:detailpagina; pl:szczegóły",
	"line":              "en:lines; es:líneas; de:Zeilen; fr:lignes; pt:linhas; it:righe; nl:lijnen; pl:wierszy",
	"queue":             "en:queued; es:en cola; de:Warteschlange; fr:file d'attente; pt:na fila; it:in coda; nl:wachtrij; pl:kolejka",
	"restart":           "en:rebooted; es:reiniciar; de:Neustart; fr:redémarrer; pt:reiniciei; it:riavviare; nl:herstarten; pl:zrestartowałem",
	"delete":            "en:removed; es:eliminar; de:löschen; fr:supprimer; pt:excluir; it:eliminato; nl:verwijderd; pl:usunąć",
	"unlink":            "en:unlink; es:desvincular; de:entkoppeln; fr:dissocier; pt:desvincular; it:scollegare; nl:ontkoppelen; pl:odłączyć",
	"hidden":            "en:hidden; es:oculto; de:versteckt; fr:cachée; pt:escondido; it:nascosto; nl:verborgen; pl:ukryte",
	"visible":           "en:visible; es:visibilidad; de:sichtbar; fr:visibilité; pt:visível; it:visibile; nl:zichtbaar; pl:widoczne",
	"scroll":            "en:scrolling; es:desplazarse; de:scrollen; fr:défiler; pt:rolagem; it:scorrere; nl:scrollen; pl:przewijanie",
	"tab":               "en:tab; es:pestaña; de:Reiter; fr:onglet; pt:aba; it:scheda; nl:tabblad; pl:zakładka",
	"window":            "en:popup; es:ventana; de:Fenster; fr:fenêtre; pt:janela; it:finestra; nl:venster; pl:okno",
	"menu":              "en:menu; es:menú; de:Menü; fr:menu; pt:menu; it:menu; nl:menu; pl:menu",
	"link":              "en:link; es:enlace; de:Link; fr:lien; pt:link; it:collegamento; nl:koppeling; pl:linku",
	"copy":              "en:paste; es:copiar; de:Zwischenablage; fr:coller; pt:colar; it:incollare; nl:klembord; pl:skopiować",
	"cancel":            "en:cancelled; es:cancelar; de:storniert; fr:annuler; pt:cancelamento; it:annullare; nl:geannuleerd; pl:anulować",
	"retry":             "en:try again; es:reintentar; de:erneut versuchen; fr:réessayer; pt:tentar novamente; it:riprovare; nl:opnieuw proberen; pl:ponowić",
	"undo":              "en:undo; es:deshacer; de:rückgängig; fr:annulla modifica; pt:desfazer; nl:ongedaan maken; pl:cofnij",
	"zoom":              "en:zooming; es:ampliar; de:vergrößern; fr:zoomer; pt:zoom; it:ingrandire; nl:vergroten; pl:powiększyć",
	"font":              "en:font; es:tipo de letra; de:Schriftart; fr:police d'écriture; pt:fonte; it:carattere; nl:lettertype; pl:czcionka",
	"field":             "en:input field; es:campo; de:Eingabefeld; fr:champ; pt:campos; it:campo; nl:invoerveld; pl:pole tekstowe",
	"form":              "en:form; es:formulario; de:Formular; fr:formulaire; pt:formulário; it:modulo; nl:formulier; pl:formularz",
	"control":           "en:dropdown; es:desplegable; de:Kontrollkästchen; fr:case à cocher; pt:caixa de seleção; it:menu a tendina; nl:selectievakje; pl:lista rozwijana",
	"gesture":           "en:swipe; es:deslizar; de:Wischgeste; fr:glisser; pt:gesto; it:trascinare; nl:slepen; pl:przesunąć",
	"color":             "en:colours; es:colores; de:Farben; fr:couleur; pt:cores; it:colori; nl:kleuren; pl:kolory",
	"size":              "en:size; es:tamaño; de:Größe; fr:taille; pt:tamanho; it:dimensione; nl:grootte; pl:rozmiar",
	"text":              "en:text; es:texto; de:Text; fr:texte; pt:textos; it:testo; nl:tekst; pl:tekstu",
	"rotation":          "en:landscape; es:rotación; de:Querformat; fr:paysage; pt:paisagem; it:orientamento; nl:liggend; pl:orientacja",
	"device":            "en:device; es:dispositivo; de:Gerät; fr:appareil; pt:dispositivos; it:dispositivi; nl:apparaat; pl:urządzenie",
	"phone":             "en:phone; es:teléfono; de:Telefon; fr:téléphone; pt:telefone; it:telefono; nl:telefoon; pl:telefonie",
	"tablet":            "en:tablet; es:tableta; de:Tablet; fr:tablette; pt:tablet; it:tablet; nl:tablet; pl:tablecie",
	"smartwatch":        "en:smartwatch; es:reloj inteligente; de:Smartwatch; fr:montre connectée; pt:relógio inteligente; it:orologio smart; nl:smartwatch; pl:zegarek",
	"web":               "en:browser; es:navegador; de:Webseite; fr:navigateur; pt:versão web; it:sito web; nl:browser; pl:przeglądarka",
	"desktop":           "en:desktop; es:escritorio; de:Desktop; fr:bureau; pt:área de trabalho; it:desktop; nl:desktopversie; pl:pulpitu",
	"microphone":        "en:microphone; es:micrófono; de:Mikrofon; fr:microphone; pt:microfone; it:microfono; nl:microfoon; pl:mikrofon",
	"voice":             "en:dictation; es:dictado; de:Spracheingabe; fr:dictée; pt:ditado; it:dettatura; nl:spraak; pl:głosowe",
	"emoji":             "en:emoji; es:emojis; de:Emojis; fr:émoticônes; pt:emoji; it:emoticon; nl:stickers; pl:emotikony",
	"subtitle":          "en:subtitles; es:subtítulos; de:Untertitel; fr:sous-titres; pt:legendas; it:sottotitoli; nl:ondertiteling; pl:napisy",
	"comment":           "en:comments; es:comentarios; de:Kommentare; fr:commentaires; pt:comentário; it:commenti; nl:opmerkingen; pl:komentarze",
	"review":            "en:reviews; es:reseñas; de:Bewertungen; fr:les avis; pt:avaliações; it:recensioni; nl:recensies; pl:recenzje",
	"friend":            "en:friends; es:amigos; de:Freunde; fr:amis; pt:amigos; it:amici; nl:vrienden; pl:znajomi",
	"follow":            "en:followers; es:seguidores; de:Abonnenten; fr:abonnés; pt:seguidores; it:follower; nl:volgers; pl:obserwujących",
	"invite":            "en:invitation; es:invitación; de:Einladung; fr:inviter; pt:convite; it:invito; nl:uitnodiging; pl:zaproszenie",
	"group":             "en:groups; es:grupo; de:Gruppe; fr:groupe; pt:grupos; it:gruppo; nl:groep; pl:grupy",
	"currency":          "en:exchange rate; es:divisas; de:Währung; fr:taux de change; pt:moeda; it:valuta; nl:wisselkoers; pl:waluta",
	"fee":               "en:fees; es:comisión; de:Gebühren; fr:frais; pt:taxas; it:commissioni; nl:transactiekosten; pl:opłata",
	"limit":             "en:limit; es:límite; de:Limit; fr:plafond; pt:limites; it:limite; nl:limiet; pl:limity",
	"expire":            "en:expired; es:caducado; de:abgelaufen; fr:expiré; pt:vencido; it:scaduto; nl:verlopen; pl:wygasła",
	"session":           "en:session; es:sesión; de:Sitzung; fr:session; pt:sessão; it:sessione; nl:sessie; pl:sesja",
	"memory":            "en:memory; es:memoria; de:Arbeitsspeicher; fr:mémoire; pt:memória; it:memoria; nl:geheugen; pl:pamięć",
	"cpu":               "en:processor; es:procesador; de:Prozessor; fr:processeur; pt:processador; it:processore; nl:processor; pl:procesor",
	"cache":             "en:cache; es:cache; de:Cache leeren; fr:vider le cache; pt:limpar cache; it:svuotare la cache; nl:cache; pl:pamięć podręczna",
	"database":          "en:database; es:base de datos; de:Datenbank; fr:base de données; pt:banco de dados; it:base di dati; nl:database; pl:baza danych",
	"request":           "en:request; es:solicitud; de:Anfrage; fr:requête; pt:requisição; it:richiesta; nl:verzoek; pl:zgłoszenie",
	"response":          "en:response; es:respuesta; de:Antwort; fr:réponse; pt:resposta; it:risposta; nl:antwoord; pl:odpowiedzi",
	"env_var":           "en:environment variables; es:variable de entorno; de:Umgebungsvariable; fr:variable d'environnement; pt:variável de ambiente; it:variabile d'ambiente; nl:omgevingsvariabele; pl:zmienna środowiskowa",
	"deploy":            "en:deployment; es:despliegue; de:Bereitstellung; fr:déploiement; pt:implantação; it:rilascio in produzione; nl:uitrollen; pl:wdrożenie",
	"dashboard":         "en:dashboard; es:panel de control; de:Dashboard; fr:tableau de bord; pt:painel; it:cruscotto; nl:dashboard; pl:pulpit",
	"chart":             "en:charts; es:gráfico; de:Diagramm; fr:graphique; pt:gráficos; it:grafici; nl:grafiek; pl:wykres",
	"statistics":        "en:statistics; es:estadísticas; de:Statistik; fr:statistiques; pt:estatísticas; it:statistiche; nl:statistieken; pl:statystyki",
	"budget":            "en:budgets; es:presupuesto; de:Budget; fr:budget; pt:orçamento; it:budget; nl:budget; pl:budżet",
	"category":          "en:categories; es:categoría; de:Kategorie; fr:catégorie; pt:categorias; it:categoria; nl:categorie; pl:kategoria",
	"tag":               "en:labels; es:etiquetas; de:Etikett; fr:étiquette; pt:etiqueta; it:etichetta; nl:etiket; pl:etykieta",
	"address":           "en:address; es:dirección; de:Adresse; fr:adresse; pt:endereço; it:indirizzo; nl:adres; pl:adresu",
	"phone_number":      "en:phone number; es:número de teléfono; de:Telefonnummer; fr:numéro de téléphone; pt:número de telefone; it:numero di telefono; nl:telefoonnummer; pl:numer telefonu",
	"name":              "en:username; es:nombre de usuario; de:Benutzername; fr:nom d'utilisateur; pt:nome de usuário; it:nome utente; nl:gebruikersnaam; pl:nazwa użytkownika",
	"id_document":       "en:passport; es:pasaporte; de:Personalausweis; fr:carte d'identité; pt:passaporte; it:carta d'identità; nl:paspoort; pl:dowód osobisty",
	"folder":            "en:folders; es:carpeta; de:Ordner; fr:dossier; pt:diretório; it:cartella; nl:folder; pl:folder",
	"import":            "en:import; es:importar; de:importieren; fr:importer; pt:importação; it:importare; nl:importeren; pl:importować",
	"spreadsheet":       "en:spreadsheet; es:hoja de cálculo; de:Tabellenkalkulation; fr:tableur; pt:planilha; it:foglio di calcolo; nl:rekenblad; pl:arkusz kalkulacyjny",
	"support":           "en:customer service; es:soporte; de:Kundendienst; fr:service client; pt:suporte; it:assistenza; nl:klantenservice; pl:pomoc",
	"wallet":            "en:Apple Pay; es:billetera; de:Wallet; fr:portefeuille; pt:carteira; it:portafoglio; nl:portemonnee; pl:portfel",
	"contactless":       "en:contactless; es:sin contacto; de:kontaktlos; fr:sans contact; pt:sem contato; it:senza contatto; nl:contactloos; pl:zbliżeniowo",
	"atm":               "en:cash machine; es:cajero; de:Geldautomat; fr:distributeur; pt:caixa eletrônico; it:bancomat; nl:geldautomaat; pl:bankomat",
	"pin":               "en:PIN; es:código PIN; de:PIN; fr:code PIN; pt:PIN; it:codice PIN; nl:pincode; pl:kod PIN",
	"block":             "en:unblock; es:bloquear; de:gesperrt; fr:débloquer; pt:desbloqueio; it:sbloccare; nl:geblokkeerd; pl:zablokowana",
	"available":         "en:available; es:disponible; de:verfügbar; fr:disponibilité; pt:disponível; it:disponibile; nl:beschikbaar; pl:dostępne",
	"unavailable":       "en:unavailable; es:no disponible; de:nicht verfügbar; fr:indisponible; pt:indisponível; it:non disponibile; nl:niet beschikbaar; pl:niedostępna",
	"success":           "en:successfully; es:exitoso; de:erfolgreich; fr:réussi; pt:sucesso; it:riuscito; nl:gelukt; pl:pomyślnie",
	"instant":           "en:instantly; es:inmediatamente; de:sofort; fr:immédiatement; pt:imediatamente; it:immediatamente; nl:meteen; pl:natychmiastowy",
	"recurring":         "en:standing order; es:orden permanente; de:Dauerauftrag; fr:virement permanent; pt:ordem permanente; it:ordine permanente; nl:doorlopende opdracht; pl:zlecenie stałe",
	"autofill":          "en:autofill; es:autocompletar; de:automatisch ausfüllen; fr:saisie automatique; pt:preenchimento automático; it:compilazione automatica; nl:automatisch aanvullen; pl:autouzupełnianie",
	"favorite":          "en:favourites; es:favoritos; de:Favoriten; fr:favoris; pt:favoritos; it:preferiti; nl:favorieten; pl:ulubione",
}

// coverExceptions are the concepts that need not reach six languages,
// with the reason.
var coverExceptions = map[string]string{
	"close_word":   "an English guard against reading 'closed' as the app closing",
	"appstore":     "store names (App Store, Google Play) are the same in every language",
	"localization": "engineering terms (i18n, l10n, localization) that users rarely write",
}

// TestLexiconCoverage checks every probe reads as its concept, and every
// concept of the lexicon has probes in at least six languages.
func TestLexiconCoverage(t *testing.T) {
	t.Parallel()
	for id, probes := range coverProbes {
		if _, ok := lex.concepts[id]; !ok {
			t.Errorf("probe table names %q, which is no lexicon concept", id)
		}
		langs := map[string]bool{}
		for _, p := range strings.Split(probes, ";") {
			lang, text, ok := strings.Cut(strings.TrimSpace(p), ":")
			if !ok {
				t.Errorf("%s: probe %q has no language", id, p)
				continue
			}
			langs[lang] = true
			if got := analyze(text).bag; got["~"+id] == 0 {
				t.Errorf("%s (%s) %q reads as %v, want ~%s", id, lang, text, analyze(text).seq, id)
			}
		}
		if len(langs) < 6 && coverExceptions[id] == "" {
			t.Errorf("%s has probes in %d languages, want at least 6", id, len(langs))
		}
	}
	for id := range lex.concepts {
		if _, ok := coverProbes[id]; !ok && coverExceptions[id] == "" {
			t.Errorf("concept %s has no probes", id)
		}
	}
}

// TestLexiconCrossLanguage checks pairs that a report and a ticket in
// different languages must share, and words that must not be read as a
// concept they only resemble in another language.
func TestLexiconCrossLanguage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want string // concept, or "!concept" when it must be absent
	}{
		{"el cargo apareció con la fecha del día anterior", "~date"},
		{"die Buchung hat das falsche Datum", "~date"},
		{"a data export of all my notes", "!~date"},
		{"the data is gone", "!~date"},
		// Harm forms read only as harm: typo matching must not stretch them
		// onto a neighbour ("correct", "signed", "written", "multiple").
		{"l'estratto corretto", "!~data_loss"},
		{"ich habe den Vertrag unterschrieben", "!~data_loss"},
		{"list jest napisany", "!~data_loss"},
		{"multiple items in the cart", "!~wrong"},
		{"my notes were overwritten", "~data_loss"},
		{"die Datei wurde überschrieben", "~data_loss"},
		{"the amount was multiplied by 100", "~wrong"},
		{"pull to refresh shows the old value", "~update"},
		{"ho riavviato il telefono", "~restart"},
		{"the job waits in the queue forever", "~queue"},
		{"la tâche reste dans la file d'attente", "~queue"},
		{"i need to delete my account", "~delete"},
		{"the card number is shown in full, not masked", "~mask"},
		{"the instant transfer", "~instant"},
		{"instant transfer", "!~install"},
		{"clear the cache", "!~hidden"},
		{"following the steps below", "!~follow"},
		{"important: the export is empty", "!~import"},
		{"el importe es incorrecto", "~price"},
		{"el importe es incorrecto", "!~import"},
		{"atm it keeps crashing", "!~atm"},
		{"the transactions list", "~list"},
		{"lista de movimientos", "~charge"},
		{"Umsätze werden nicht angezeigt", "~charge"},
		{"le solde disponible", "~available"},
		{"the app shows a spinner in the background", "~background"},
	}
	for _, c := range cases {
		bag := analyze(c.text).bag
		want, absent := strings.CutPrefix(c.want, "!")
		if got := bag[want] > 0; got == absent {
			t.Errorf("%q: %s present=%v (terms %v)", c.text, want, got, analyze(c.text).seq)
		}
	}
}
