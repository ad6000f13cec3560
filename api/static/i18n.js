// The page's words in Dutch (the default: the content team is Dutch) and English, in one table
// per language. `I18n.t("key", {name: value})` gives the text in the chosen language (English
// when a Dutch text is missing, the key itself when both are). Static texts in index.html carry
// `data-i18n="key"` (text), `data-i18n-aria-label`, `data-i18n-placeholder` or
// `data-i18n-title`; `I18n.apply()` fills them in. Other scripts add their own words with
// `I18n.add({nl: {...}, en: {...}})` and re-render on `I18n.onChange(fn)`. Error codes from the
// API are never translated (they are what support looks up); their explanations (`errors.*`)
// are, and stand in for the server's English words on the Dutch page.
"use strict";

const I18n = (() => {
  const STORAGE = "ingest.lang";
  const LANGUAGES = ["nl", "en"];
  const LOCALES = { nl: "nl-NL", en: "en-GB" };
  const listeners = [];

  const tables = {
    nl: {
      "app.name": "Content-verwerking",
      "app.skip": "Naar de inhoud",
      "nav.main": "Hoofdmenu",
      "nav.upload": "Uploaden",
      "nav.documents": "Documenten",
      "nav.signOut": "Afmelden",
      "lang.switch": "English",
      "lang.switchLabel": "Switch to English",

      "signin.title": "Aanmelden",
      "signin.intro": "Vul de API-sleutel in die u hebt gekregen. Hij blijft alleen in dit "
        + "tabblad bewaard en is weg zodra u het sluit.",
      "signin.key": "API-sleutel",
      "signin.button": "Aanmelden",
      "signin.enterKey": "Vul uw API-sleutel in.",
      "signin.refused": "Deze sleutel is geweigerd. Controleer hem en probeer het opnieuw.",
      "signin.refusedAgain": "Deze sleutel is geweigerd. Controleer hem en meld u opnieuw aan.",
      "signin.signedOut": "U bent afgemeld.",
      "title.signin": "Aanmelden",
      "title.upload": "Uploaden",
      "title.documents": "Documenten",

      "upload.title": "Documenten uploaden",
      "upload.lead": "Markdown-pagina's en PDF-folders. Ze worden omgezet, in stukken geknipt en "
        + "geïndexeerd voor de chatbot; volg ze onder",
      "upload.leadLink": "Documenten",
      "upload.drop": "Sleep bestanden hierheen of kies bestanden",
      "upload.dropHint": "Markdown (.md), tekst of PDF, tot {limit} per bestand. Meerdere "
        + "tegelijk mag.",
      "upload.theLimit": "de uploadlimiet",
      "upload.files": "Bestanden",
      "upload.noFiles": "Nog geen bestanden gekozen.",
      "upload.button": "Uploaden",
      "upload.buttonMany": "{count} bestanden uploaden",
      "upload.clear": "Lijst leegmaken",
      "upload.details": "Gegevens (optioneel)",
      "upload.fTitle": "Titel",
      "upload.fTitleHint": "Alleen gebruikt als u één bestand uploadt; anders houdt elk "
        + "document zijn bestandsnaam.",
      "upload.fFolder": "Map",
      "upload.fFolderHint": "Bestanden met dezelfde naam in verschillende mappen blijven "
        + "aparte documenten, bijv. cardiologie. Zonder map is een bestand met een bekende naam "
        + "een nieuwe versie.",
      "upload.fSourceUrl": "Bron-URL",
      "upload.fSourceUrlHint": "Waar patiënten het origineel kunnen lezen.",
      "upload.fLanguage": "Taal",
      "upload.langNone": "Niet ingesteld",
      "upload.langNl": "Nederlands (nl)",
      "upload.langEn": "Engels (en)",
      "upload.langFr": "Frans (fr)",
      "upload.langDe": "Duits (de)",
      "upload.fTags": "Labels",
      "upload.fTagsHint": "Scheid met komma's, bijv. orthopedie, knie.",
      "upload.ready": "Klaar om te uploaden",
      "upload.uploading": "Bezig met uploaden…",
      "upload.received": "Ontvangen als versie {version}.",
      "upload.metadata": "Ontvangen als versie {version}: zelfde inhoud als versie {same}, "
        + "alleen de gegevens (titel, URL, taal of labels) zijn gewijzigd; er wordt niets "
        + "opnieuw verwerkt.",
      "upload.newVersion": "Nieuwe versie van \u201c{title}\u201d, geüpload door {who} op {date}.",
      "upload.follow": "Volgen",
      "upload.remove": "Verwijderen",
      "upload.removeLabel": "{name} verwijderen",
      "upload.progressLabel": "Upload van {name}",
      "upload.readyCount": "{count} bestand(en) klaar om te uploaden.",
      "upload.receivedAnnounce": "{name}: ontvangen.",
      "upload.unchanged": "Ongewijzigd: zelfde inhoud als versie {version}; er is niets opnieuw "
        + "verwerkt.",
      "upload.detailsCleared": "De gegevens hierboven zijn gewist: ze hoorden bij de bestanden "
        + "die u net uploadde.",
      "upload.unknown": "onbekend",

      "documents.title": "Documenten",
      "documents.filter": "Documenten filteren",
      "documents.search": "Zoeken op titel",
      "documents.status": "Status",
      "documents.allStatuses": "Alle (niet verwijderd)",
      "documents.source": "Bron",
      "documents.allSources": "Alle bronnen",
      "documents.caption": "Documenten, nieuwste wijziging eerst",
      "documents.colTitle": "Titel",
      "documents.colSource": "Bron",
      "documents.colStatus": "Status",
      "documents.colChanged": "Laatste wijziging",
      "documents.colChunks": "Stukken",
      "documents.colTokens": "Woorddelen",
      "documents.previous": "Vorige",
      "documents.next": "Volgende",
      "documents.pages": "Pagina's",
      "documents.noMatch": "Geen documenten voor deze filters.",
      "documents.none": "Nog geen documenten: upload er een paar.",
      "documents.count": "{count} documenten",
      "documents.countOne": "1 document",
      "documents.inProgress": "{count} in behandeling (wordt live bijgewerkt)",
      "documents.failed": "{count} mislukt",
      "documents.range": "{first}\u2013{last} van {total}",

      "document.back": "Alle documenten",
      "document.heading": "Document",
      "document.loading": "Laden…",
      "document.notFound": "Document niet gevonden",
      "document.reingest": "Opnieuw verwerken",
      "document.delete": "Verwijderen…",
      "document.versions": "Versies",
      "document.history": "Geschiedenis",
      "document.chunks": "Stukken",
      "document.colVersion": "Versie",
      "document.colStatus": "Status",
      "document.colFile": "Bestand",
      "document.colBy": "Geüpload door",
      "document.colReceived": "Ontvangen",
      "document.colFinished": "Klaar",
      "document.colChunks": "Stukken",
      "document.colTokens": "Woorddelen verwerkt",
      "fact.status": "Status",
      "fact.source": "Bron",
      "fact.identifier": "Sleutel",
      "fact.sourceUrl": "Bron-URL",
      "fact.language": "Taal",
      "fact.tags": "Labels",
      "fact.indexed": "Geïndexeerde versie",
      "fact.chunks": "Stukken",
      "fact.tokens": "Omvang",
      "fact.changed": "Laatste wijziging",
      "fact.version": "versie {number}",
      "fact.noneYet": "nog geen",
      "fact.tokensText": "{inChunks} woorddelen in de stukken; {spent} woorddelen verwerkt voor de "
        + "zoekindex (alle versies)",
      "error.title": "De nieuwste versie kon niet worden geïndexeerd",
      "error.noReason": "Er is geen reden vastgelegd.",
      "error.retry": "Dit is mogelijk tijdelijk: kies Opnieuw verwerken om het nog eens te "
        + "proberen.",
      "error.fix": "Verbeter het bestand en upload het opnieuw, of vraag het supportteam.",
      "error.fixFile": "Opnieuw verwerken helpt hier niet: het bestand zelf moet anders. "
        + "Upload een verbeterd bestand.",
      "error.code": "Foutcode: {code}",
      "history.version": "versie {number}",
      "admonition.note": "Let op",
      "admonition.tip": "Tip",
      "admonition.info": "Informatie",
      "admonition.warning": "Waarschuwing",
      "admonition.caution": "Voorzichtig",
      "admonition.danger": "Gevaar",
      "admonition.important": "Belangrijk",
      "bulk.label": "Bulkacties",
      "bulk.select": "{title} selecteren",
      "bulk.selectPage": "Alle documenten op deze pagina selecteren",
      "bulk.selectAll": "Alle {count} documenten van dit filter selecteren",
      "bulk.count": "{count} geselecteerd",
      "bulk.reingest": "Opnieuw verwerken",
      "bulk.reingestCount": "{count} opnieuw verwerken",
      "bulk.delete": "Verwijderen…",
      "bulk.deleteCount": "{count} verwijderen…",
      "bulk.clear": "Selectie wissen",
      "bulk.export": "Lijst exporteren (CSV)",
      "bulk.confirmTitle": "{count} documenten verwijderen?",
      "bulk.confirmText": "Ze verdwijnen uit de lijst en uit de antwoorden van de chatbot.",
      "bulk.deleted": "{count} documenten verwijderd.",
      "bulk.reingested": "{count} documenten worden opnieuw verwerkt.",
      "stall.noWorkers": "De verwerking staat stil: nieuwe documenten wachten sinds {minutes} "
        + "minuten en er draait geen verwerker. Uw uploads zijn bewaard; waarschuw de beheerder.",
      "stall.waiting": "De verwerking staat stil: nieuwe documenten wachten sinds {minutes} "
        + "minuten. Uw uploads zijn bewaard; waarschuw de beheerder als dit zo blijft.",
      "version.download": "Origineel downloaden",
      "version.downloadLabel": "Het originele bestand van versie {number} downloaden",
      "version.downloaded": "Het originele bestand is gedownload.",
      "version.metadata": "gegevens gewijzigd (titel, URL, taal of labels)",
      "history.uploadedBy": "geüpload door {who}",
      "history.by": "door {who}",
      "history.took": "duurde {duration}",
      "chunks.title": "Stuk {number}",
      "chunks.ocr": "gescand, OCR {confidence} %",
      "ocr.page": "pagina",
      "ocr.pages": "pagina's",
      "ocr.low": "Gescand; tekst herkend met lage betrouwbaarheid op {pages}: controleer de stukken.",
      "ocr.read": "Gescand; de tekst van {pages} is herkend met OCR (betrouwbaarheid {confidence} %).",
      "chunks.tokens": "{count} woorddelen",
      "chunks.page": "pagina {page}",
      "chunks.pages": "pagina's {first}\u2013{last}",
      "chunks.pagesHint": "De pagina's van de eigen tekst van dit stuk (zonder de overlap).",
      "chunks.headingPath": "Kopjespad: ",
      "chunks.beforeHeading": "(vóór het eerste kopje)",
      "chunks.overlap": "Overlap met het vorige stuk ({count} woorddelen)",
      "chunks.own": "Eigen tekst",
      "chunks.raw": "Markdown bekijken",
      "chunks.textLabel": "Tekst van stuk {number}",
      "chunks.summary": "{count} stukken van de geïndexeerde versie",
      "chunks.summaryOne": "1 stuk van de geïndexeerde versie",
      "chunks.firstShown": "; de eerste {count} worden getoond.",
      "chunks.notYet": "Nog geen stukken geïndexeerd: ze verschijnen hier zodra het document "
        + "geïndexeerd is.",
      "chunks.none": "Er zijn geen stukken geïndexeerd voor dit document.",
      "action.reingested": "Opnieuw door de verwerking gestuurd als nieuwe versie.",
      "action.deleted": "\u201c{name}\u201d verwijderd.",
      "action.theDocument": "Het document",
      "confirm.title": "Dit document verwijderen?",
      "confirm.text": "Het verdwijnt nu uit de lijst en de chatbot gebruikt het kort daarna niet "
        + "meer. Dit kan niet ongedaan worden gemaakt; upload het opnieuw om het terug te halen.",
      "confirm.cancel": "Annuleren",
      "confirm.delete": "Verwijderen",

      "status.received": "Ontvangen, wacht op verwerking",
      "status.converting": "Wordt omgezet naar tekst",
      "status.chunking": "Wordt in stukken geknipt",
      "status.embedding": "De zoekindex wordt berekend",
      "status.upserting": "Wordt in de zoekindex geschreven",
      "status.indexed": "Geïndexeerd: de chatbot kan het gebruiken",
      "status.failed": "Mislukt",
      "status.unchanged": "Ongewijzigd: zelfde inhoud als de geïndexeerde versie",
      "status.superseded": "Vervangen door een nieuwere versie",
      "status.deleted": "Verwijderd",
      "badge.received": "ontvangen",
      "badge.converting": "omzetten",
      "badge.chunking": "knippen",
      "badge.embedding": "berekenen",
      "badge.upserting": "indexeren",
      "badge.indexed": "geïndexeerd",
      "badge.failed": "mislukt",
      "badge.unchanged": "ongewijzigd",
      "badge.superseded": "vervangen",
      "badge.deleted": "verwijderd",
      "status.hidden": "Verborgen voor de chatbot",
      "status.shown": "Weer getoond aan de chatbot",
      "status.chunk_hidden": "Stuk verborgen voor de chatbot",
      "status.chunk_shown": "Stuk weer getoond aan de chatbot",
      "badge.hidden": "verborgen",
      "badge.shown": "getoond",
      "badge.chunk_hidden": "stuk verborgen",
      "badge.chunk_shown": "stuk getoond",
      "edit.open": "Gegevens bewerken\u2026",
      "edit.title": "Gegevens bewerken",
      "edit.text": "De chatbot noemt het document meteen met de nieuwe titel, URL, taal en "
        + "labels. De tekst zelf wordt niet opnieuw verwerkt.",
      "edit.titleField": "Titel",
      "edit.url": "Bron-URL",
      "edit.language": "Taal (bijvoorbeeld nl)",
      "edit.tags": "Labels, gescheiden door komma's",
      "edit.cancel": "Annuleren",
      "edit.save": "Opslaan",
      "edit.done": "Opgeslagen: {fields}. De chatbot gebruikt de nieuwe gegevens zodra de "
        + "geschiedenis 'geïndexeerd' meldt.",
      "edit.nothing": "Niets gewijzigd.",
      "hide.document": "Verbergen\u2026",
      "hide.show": "Tonen",
      "hide.chunk": "Verbergen\u2026",
      "hide.chunkLabel": "Stuk {number} verbergen",
      "hide.showChunkLabel": "Stuk {number} weer tonen",
      "hide.fact": "Chatbot",
      "hide.visible": "Zichtbaar in de antwoorden",
      "hide.hiddenBy": "verborgen door {who}",
      "hide.chunksHidden": "{count} stuk(ken) apart verborgen",
      "hide.title": "Verbergen voor de chatbot",
      "hide.titleChunk": "Stuk {number} verbergen voor de chatbot",
      "hide.text": "De chatbot gebruikt het niet meer tot u het weer toont. Het blijft verborgen "
        + "in nieuwe versies (een stuk zolang de tekst ervan niet verandert).",
      "hide.reason": "Reden (komt in de geschiedenis)",
      "hide.confirm": "Verbergen",
      "hide.cancel": "Annuleren",
      "hide.done": "Verborgen voor de chatbot.",
      "hide.shownDone": "Weer zichtbaar voor de chatbot.",
      "history.chunk": "stuk {number}",

      "problem.401": "Deze sleutel is geweigerd. Meld u opnieuw aan met een geldige API-sleutel.",
      "problem.403": "Deze sleutel mag dit niet: de bevoegdheid '{scope}' ontbreekt. Vraag de "
        + "beheerders om een sleutel met die bevoegdheid.",
      "problem.413": "Geweigerd: te groot (max. {limit}).",
      "problem.413NoLimit": "Geweigerd: te groot.",
      "problem.415": "Geweigerd: geen Markdown-, tekst-, PDF-, Word- (.docx) of HTML-bestand "
        + "(beoordeeld op de inhoud, niet op de naam).",
      "problem.404": "Dit document bestaat niet (meer).",
      "problem.422": "Geweigerd: {detail}",
      "problem.422Default": "het verzoek is niet geldig",
      "problem.empty": "Geweigerd: het bestand is leeg.",
      "problem.503": "De dienst is even niet beschikbaar. Er is niets opgeslagen; probeer het zo "
        + "opnieuw.",
      "problem.index_unavailable": "De zoekindex is nu niet bereikbaar. Er is niets verloren; "
        + "probeer het over een paar seconden opnieuw.",
      "problem.qdrant_locked": "De zoekindex is nu niet bereikbaar: een ander programma houdt "
        + "hem bezet. Probeer het later opnieuw; blijft het zo, vraag dan het supportteam.",
      "problem.embedding_unavailable": "De vraag kon nu niet worden verwerkt: de rekendienst "
        + "voor de zoekindex antwoordt niet. Probeer het zo opnieuw; blijft het zo, vraag dan "
        + "het supportteam.",
      "problem.0": "Geen antwoord van de server: controleer uw verbinding en probeer het opnieuw.",
      "problem.error": "Fout",
      "problem.403NoScope": "Deze sleutel mag dit niet (403). Vraag de beheerders om een sleutel "
        + "met de juiste bevoegdheid.",
      "problem.other": "De server kon dit niet uitvoeren (foutstatus {status}). Probeer het "
        + "opnieuw; blijft het misgaan, vraag dan het supportteam.",

      // What the chunker found in a chunk (its `kinds`).
      "kind.heading": "kopje",
      "kind.text": "tekst",
      "kind.list": "lijst",
      "kind.table": "tabel",
      "kind.admonition": "kader",
      "kind.code": "code",
      "kind.quote": "citaat",
      "kind.html": "HTML",
      // A version's file type (`media_type`), as an editor names it.
      "media.text/markdown": "Markdown",
      "media.text/x-markdown": "Markdown",
      "media.text/plain": "tekst",
      "media.text/html": "HTML",
      "media.application/pdf": "PDF",
      "media.application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word (.docx)",
      // Named systems that act on a version (an event's `actor`), not a person's key name.
      "actor.reaper": "de automatische controle",
      "actor.cli": "de beheerders (opdrachtregel)",
      "actor.cms": "het CMS",
      // Where documents come from (`source`).
      "source.upload": "geüpload",
      "source.files": "bestanden",
      "source.cms": "CMS",
      // The service's history notes (English on the server), in Dutch; see detail() below.
      "detail.sameContent": "zelfde inhoud als versie {number}",
      "detail.samePage": "de opgehaalde pagina is gelijk aan versie {number}",
      "detail.indexed": "versie {number} geïndexeerd",
      "detail.arrived": "versie {number} binnengekomen",
      "detail.removed": "document verwijderd",
      "detail.leaseRanOut": "de verwerking ervan stopte halverwege: opnieuw ingepland",
      "detail.noTask": "{seconds} seconden zonder verwerking: opnieuw ingepland",
      "detail.metadata": "gegevens gewijzigd: {fields}",
      "detail.relabelled": "gegevens bijgewerkt in {number} stukken van de zoekindex, zonder "
        + "opnieuw te rekenen",
      "field.title": "titel",
      "field.source_url": "URL",
      "field.language": "taal",
      "field.tags": "labels",

      "errors.no_fields": "Geef minstens één gegeven op om te wijzigen: titel, URL, taal of "
        + "labels.",
      "errors.pdf_encrypted": "De PDF is beveiligd met een wachtwoord. Sla hem op zonder "
        + "beveiliging en upload hem opnieuw.",
      "errors.pdf_corrupt": "De PDF is beschadigd en kan niet worden gelezen. Exporteer hem "
        + "opnieuw vanuit het bronbestand en upload hem nog eens.",
      "errors.pdf_no_text": "De PDF bevat geen tekst (een scan). Laat er eerst tekstherkenning "
        + "(OCR) op los.",
      "errors.too_large": "Het bestand is te groot, heeft te veel pagina's of bevat te veel "
        + "tekst (een PDF-pagina met meer tekst dan er leesbaar op past). Splits het of exporteer "
        + "het opnieuw vanuit het bronbestand en upload het nog eens.",
      "errors.too_complex": "Het opdelen van dit document kostte meer rekentijd dan is "
        + "toegestaan: de tekst is ongewoon groot of ingewikkeld (een heel lange tabel, lijst of "
        + "regel, diep geneste lijsten). Splits het in kleinere documenten of haal het deel weg "
        + "dat niet voor lezers bedoeld is, en upload het opnieuw.",
      "errors.conversion_timeout": "Het omzetten duurde te lang. Probeer het opnieuw of "
        + "vraag het supportteam.",
      "errors.unsupported_media_type": "Dit bestandstype wordt niet ondersteund. Upload een PDF, "
        + "een Word-document (.docx), een HTML-pagina of een Markdown- of tekstbestand.",
      "errors.docx_corrupt": "Het Word-document is beschadigd en kan niet worden gelezen. Open "
        + "het in Word, sla het opnieuw op als .docx en upload het nog eens.",
      "errors.office_encrypted": "Het Word-document is beveiligd met een wachtwoord. Sla het op "
        + "zonder wachtwoord en upload het opnieuw.",
      "errors.office_macros": "Het Word-document bevat macro's (.docm). Sla het op als gewoon "
        + "Word-document (.docx) zonder macro's en upload het opnieuw.",
      "errors.html_no_content": "De HTML-pagina bevat geen leesbare tekst (alleen navigatie, "
        + "scripts of afbeeldingen). Upload de pagina met de artikeltekst, of een PDF.",
      "errors.undecodable_text": "De tekst is niet in UTF-8 opgeslagen. Sla het bestand op als "
        + "UTF-8 en upload het opnieuw.",
      "errors.fetch_failed": "De pagina kon niet bij het CMS worden opgehaald.",
      "errors.fetch_refused": "Het adres van de pagina is niet toegestaan.",
      "errors.stuck": "De verwerking bleef hangen en is na meerdere pogingen gestopt. Kies "
        + "Opnieuw verwerken.",
      "errors.transient_error": "Een tijdelijke storing. Kies Opnieuw verwerken om het nog eens te "
        + "proberen; blijft het misgaan, vraag dan het supportteam.",
      "errors.internal_error": "Er ging iets onverwachts mis in de verwerking. Kies Opnieuw "
        + "verwerken; blijft het misgaan, vraag dan het supportteam (zij vinden de details in de "
        + "logboeken).",
      "errors.fetch_unavailable": "Het CMS was niet bereikbaar om de pagina op te halen. Dit is "
        + "meestal tijdelijk: kies later Opnieuw verwerken.",
      "errors.embedding_not_configured": "De rekendienst voor de zoekindex is niet ingesteld. "
        + "Vraag het supportteam.",
      "errors.embedding_rejected": "De rekendienst voor de zoekindex weigerde deze tekst. Vraag "
        + "het supportteam.",
      "errors.embedding_unavailable": "De rekendienst voor de zoekindex was niet bereikbaar. Dit "
        + "is meestal tijdelijk: kies later Opnieuw verwerken.",
      "errors.embedding_invalid_response": "De rekendienst voor de zoekindex gaf een onbruikbaar "
        + "antwoord. Kies Opnieuw verwerken; blijft het misgaan, vraag dan het supportteam.",
      "errors.embedding_dimensions": "De rekendienst voor de zoekindex past niet bij de "
        + "zoekindex (verkeerde instelling). Vraag het supportteam.",
      "errors.embedder_missing": "De rekendienst voor de zoekindex ontbreekt. Vraag het "
        + "supportteam.",
      "errors.empty_input": "Een stuk tekst was leeg en kon niet worden verwerkt. Vraag het "
        + "supportteam.",
      "errors.input_too_long": "Een stuk tekst was te lang voor de zoekindex. Vraag het "
        + "supportteam.",
      "errors.qdrant_locked": "De zoekindex was bezet. Kies later Opnieuw verwerken.",
      "errors.index_unavailable": "De zoekindex was niet bereikbaar. Er is niets verloren; "
        + "kies later Opnieuw verwerken.",
      "errors.configuration": "De dienst is verkeerd ingesteld. Vraag het supportteam.",
      "errors.database": "De database gaf een fout. Probeer het later opnieuw of vraag het "
        + "supportteam.",
      "errors.no_schema": "De database is nog niet ingericht. Vraag het supportteam.",
      "errors.embedding_quota": "Het tegoed bij de rekendienst voor de zoekindex is op. Vraag het "
        + "supportteam.",
      "errors.tokenizer_unavailable": "Het onderdeel dat tekst in woorddelen opdeelt kon niet "
        + "worden geladen. Vraag het supportteam.",
      "errors.front_matter_refused": "De front matter (de YAML tussen de ---regels bovenaan) is "
        + "geweigerd: geen YAML-ankers of -aliassen (&naam, *naam), hoogstens 64 KB en 20 niveaus "
        + "diep, en alleen datums die bestaan (zoals 2024-05-01; zet andere waarden tussen "
        + "aanhalingstekens). Pas dit aan en upload het bestand opnieuw.",
      "errors.tags_refused": "Te veel labels of een te lang label: hoogstens 100 labels van "
        + "elk hoogstens 100 tekens. Kort de labels in en probeer het opnieuw.",
      "errors.url_refused": "Het webadres (bron-URL of url in de front matter) moet met http:// "
        + "of https:// beginnen. Pas het aan en probeer het opnieuw.",
      "errors.invalid_field": "Een veld bevat tekens of getallen die niet kunnen worden opgeslagen "
        + "(een NUL-teken, een losse surrogaat, NaN of een te groot getal). Pas het veld aan en "
        + "probeer het opnieuw.",
      "errors.empty_document": "Deze versie bevat geen tekst om te indexeren (alleen front matter "
        + "of niets leesbaars). De vorige versie blijft gewoon vindbaar. Wilt u het document echt "
        + "leegmaken, verwijder het dan of upload met allow_empty=true (sleutel met het recht "
        + "delete).",
    },
    en: {
      "app.name": "Content ingestion",
      "app.skip": "Skip to content",
      "nav.main": "Main",
      "nav.upload": "Upload",
      "nav.documents": "Documents",
      "nav.signOut": "Sign out",
      "lang.switch": "Nederlands",
      "lang.switchLabel": "Schakel naar Nederlands",

      "signin.title": "Sign in",
      "signin.intro": "Enter the API key you were given. It is kept in this browser tab only and "
        + "forgotten when you close it.",
      "signin.key": "API key",
      "signin.button": "Sign in",
      "signin.enterKey": "Enter your API key.",
      "signin.refused": "This key was refused. Check it and try again.",
      "signin.refusedAgain": "This key was refused. Check it and sign in again.",
      "signin.signedOut": "You are signed out.",
      "title.signin": "Sign in",
      "title.upload": "Upload",
      "title.documents": "Documents",

      "upload.title": "Upload documents",
      "upload.lead": "Markdown pages and PDF brochures. They are converted, cut into chunks and "
        + "indexed for the chatbot; follow them under",
      "upload.leadLink": "Documents",
      "upload.drop": "Drop files here or choose files",
      "upload.dropHint": "Markdown (.md), text or PDF, up to {limit} each. Several at once is "
        + "fine.",
      "upload.theLimit": "the upload limit",
      "upload.files": "Files",
      "upload.noFiles": "No files chosen yet.",
      "upload.button": "Upload",
      "upload.buttonMany": "Upload {count} files",
      "upload.clear": "Clear list",
      "upload.details": "Details (optional)",
      "upload.fTitle": "Title",
      "upload.fTitleHint": "Only used when you upload a single file; otherwise each document "
        + "keeps its file name.",
      "upload.fFolder": "Folder",
      "upload.fFolderHint": "Files that share a name in different folders stay separate "
        + "documents, e.g. cardiology. Without a folder, a file with a known name is a new "
        + "version.",
      "upload.fSourceUrl": "Source URL",
      "upload.fSourceUrlHint": "Where patients can read the original.",
      "upload.fLanguage": "Language",
      "upload.langNone": "Not set",
      "upload.langNl": "Dutch (nl)",
      "upload.langEn": "English (en)",
      "upload.langFr": "French (fr)",
      "upload.langDe": "German (de)",
      "upload.fTags": "Tags",
      "upload.fTagsHint": "Separate with commas, e.g. orthopedie, knie.",
      "upload.ready": "Ready to upload",
      "upload.uploading": "Uploading…",
      "upload.received": "Received as version {version}.",
      "upload.metadata": "Received as version {version}: same content as version {same}, only "
        + "the details (title, URL, language or labels) changed; nothing is processed again.",
      "upload.newVersion": "New version of \u201c{title}\u201d, uploaded by {who} on {date}.",
      "upload.follow": "Follow it",
      "upload.remove": "Remove",
      "upload.removeLabel": "Remove {name}",
      "upload.progressLabel": "Upload of {name}",
      "upload.readyCount": "{count} file(s) ready to upload.",
      "upload.receivedAnnounce": "{name}: received.",
      "upload.unchanged": "Unchanged: same content as version {version}; nothing was processed "
        + "again.",
      "upload.detailsCleared": "The details above were cleared: they belonged to the files you "
        + "just uploaded.",
      "upload.unknown": "unknown",

      "documents.title": "Documents",
      "documents.filter": "Filter documents",
      "documents.search": "Search by title",
      "documents.status": "Status",
      "documents.allStatuses": "All (not deleted)",
      "documents.source": "Source",
      "documents.allSources": "All sources",
      "documents.caption": "Documents, newest change first",
      "documents.colTitle": "Title",
      "documents.colSource": "Source",
      "documents.colStatus": "Status",
      "documents.colChanged": "Last change",
      "documents.colChunks": "Chunks",
      "documents.colTokens": "Tokens",
      "documents.previous": "Previous",
      "documents.next": "Next",
      "documents.pages": "Pages",
      "documents.noMatch": "No documents match these filters.",
      "documents.none": "No documents yet: upload some.",
      "documents.count": "{count} documents",
      "documents.countOne": "1 document",
      "documents.inProgress": "{count} in progress (updating live)",
      "documents.failed": "{count} failed",
      "documents.range": "{first}\u2013{last} of {total}",

      "document.back": "All documents",
      "document.heading": "Document",
      "document.loading": "Loading…",
      "document.notFound": "Document not found",
      "document.reingest": "Re-ingest",
      "document.delete": "Delete…",
      "document.versions": "Versions",
      "document.history": "History",
      "document.chunks": "Chunks",
      "document.colVersion": "Version",
      "document.colStatus": "Status",
      "document.colFile": "File",
      "document.colBy": "Uploaded by",
      "document.colReceived": "Received",
      "document.colFinished": "Finished",
      "document.colChunks": "Chunks",
      "document.colTokens": "Tokens spent",
      "fact.status": "Status",
      "fact.source": "Source",
      "fact.identifier": "Identifier",
      "fact.sourceUrl": "Source URL",
      "fact.language": "Language",
      "fact.tags": "Tags",
      "fact.indexed": "Indexed version",
      "fact.chunks": "Chunks",
      "fact.tokens": "Tokens",
      "fact.changed": "Last change",
      "fact.version": "version {number}",
      "fact.noneYet": "none yet",
      "fact.tokensText": "{inChunks} in chunks, {spent} spent on embeddings",
      "error.title": "The latest version could not be indexed",
      "error.noReason": "No reason was recorded.",
      "error.retry": "This may be temporary: press Re-ingest to try again.",
      "error.fix": "Fix the file and upload it again, or ask the support team.",
      "error.fixFile": "Re-ingesting cannot help here: the file itself must change. Upload a "
        + "fixed file.",
      "error.code": "Error code: {code}",
      "history.version": "version {number}",
      "admonition.note": "Note",
      "admonition.tip": "Tip",
      "admonition.info": "Information",
      "admonition.warning": "Warning",
      "admonition.caution": "Caution",
      "admonition.danger": "Danger",
      "admonition.important": "Important",
      "bulk.label": "Bulk actions",
      "bulk.select": "Select {title}",
      "bulk.selectPage": "Select all documents on this page",
      "bulk.selectAll": "Select all {count} documents of this filter",
      "bulk.count": "{count} selected",
      "bulk.reingest": "Re-process",
      "bulk.reingestCount": "Re-process {count}",
      "bulk.delete": "Delete…",
      "bulk.deleteCount": "Delete {count}…",
      "bulk.clear": "Clear selection",
      "bulk.export": "Export the list (CSV)",
      "bulk.confirmTitle": "Delete {count} documents?",
      "bulk.confirmText": "They leave the list and the chatbot's answers.",
      "bulk.deleted": "{count} documents deleted.",
      "bulk.reingested": "{count} documents are being processed again.",
      "stall.noWorkers": "Processing has stopped: new documents have waited {minutes} minutes "
        + "and no worker is running. Your uploads are kept; tell the operators.",
      "stall.waiting": "Processing has stopped: new documents have waited {minutes} minutes. "
        + "Your uploads are kept; tell the operators if this stays.",
      "version.download": "Download original",
      "version.downloadLabel": "Download the original file of version {number}",
      "version.downloaded": "The original file was downloaded.",
      "version.metadata": "fields changed (title, URL, language or labels)",
      "history.uploadedBy": "uploaded by {who}",
      "history.by": "by {who}",
      "history.took": "took {duration}",
      "chunks.title": "Chunk {number}",
      "chunks.ocr": "scanned, OCR {confidence} %",
      "ocr.page": "page",
      "ocr.pages": "pages",
      "ocr.low": "Scanned; text recognised with low confidence on {pages}: check the chunks.",
      "ocr.read": "Scanned; the text of {pages} was recognised with OCR (confidence {confidence} %).",
      "chunks.tokens": "{count} tokens",
      "chunks.page": "page {page}",
      "chunks.pages": "pages {first}\u2013{last}",
      "chunks.pagesHint": "The pages of this chunk's own text (not the overlap).",
      "chunks.headingPath": "Heading path: ",
      "chunks.beforeHeading": "(before the first heading)",
      "chunks.overlap": "Overlap with the previous chunk ({count} tokens)",
      "chunks.own": "Own text",
      "chunks.raw": "Show the Markdown",
      "chunks.textLabel": "Text of chunk {number}",
      "chunks.summary": "{count} chunks of the indexed version",
      "chunks.summaryOne": "1 chunk of the indexed version",
      "chunks.firstShown": "; the first {count} are shown.",
      "chunks.notYet": "No chunks indexed yet: they appear here as soon as the document is "
        + "indexed.",
      "chunks.none": "No chunks are indexed for this document.",
      "action.reingested": "Sent through the pipeline again as a new version.",
      "action.deleted": "Deleted \u201c{name}\u201d.",
      "action.theDocument": "The document",
      "confirm.title": "Delete this document?",
      "confirm.text": "It leaves the list now and the chatbot stops citing it shortly after. "
        + "This cannot be undone; to bring it back, upload it again.",
      "confirm.cancel": "Cancel",
      "confirm.delete": "Delete",

      "status.received": "Received, waiting to be processed",
      "status.converting": "Converting to text",
      "status.chunking": "Cutting into chunks",
      "status.embedding": "Computing embeddings",
      "status.upserting": "Writing to the search index",
      "status.indexed": "Indexed: the chatbot can use it",
      "status.failed": "Failed",
      "status.unchanged": "Unchanged: same content as the indexed version",
      "status.superseded": "Superseded by a newer version",
      "status.deleted": "Deleted",
      "badge.received": "received",
      "badge.converting": "converting",
      "badge.chunking": "chunking",
      "badge.embedding": "embedding",
      "badge.upserting": "upserting",
      "badge.indexed": "indexed",
      "badge.failed": "failed",
      "badge.unchanged": "unchanged",
      "badge.superseded": "superseded",
      "badge.deleted": "deleted",
      "status.hidden": "Hidden from the chatbot",
      "status.shown": "Shown to the chatbot again",
      "status.chunk_hidden": "Chunk hidden from the chatbot",
      "status.chunk_shown": "Chunk shown to the chatbot again",
      "badge.hidden": "hidden",
      "badge.shown": "shown",
      "badge.chunk_hidden": "chunk hidden",
      "badge.chunk_shown": "chunk shown",
      "edit.open": "Edit details\u2026",
      "edit.title": "Edit details",
      "edit.text": "The chatbot names the document with the new title, URL, language and labels "
        + "at once. The text itself is not processed again.",
      "edit.titleField": "Title",
      "edit.url": "Source URL",
      "edit.language": "Language (e.g. nl)",
      "edit.tags": "Labels, separated by commas",
      "edit.cancel": "Cancel",
      "edit.save": "Save",
      "edit.done": "Saved: {fields}. The chatbot uses the new details once the history says "
        + "'indexed'.",
      "edit.nothing": "Nothing changed.",
      "hide.document": "Hide\u2026",
      "hide.show": "Show",
      "hide.chunk": "Hide\u2026",
      "hide.chunkLabel": "Hide chunk {number}",
      "hide.showChunkLabel": "Show chunk {number} again",
      "hide.fact": "Chatbot",
      "hide.visible": "Visible in answers",
      "hide.hiddenBy": "hidden by {who}",
      "hide.chunksHidden": "{count} chunk(s) hidden on their own",
      "hide.title": "Hide from the chatbot",
      "hide.titleChunk": "Hide chunk {number} from the chatbot",
      "hide.text": "The chatbot stops using it until you show it again. It stays hidden in new "
        + "versions (a chunk while its text is unchanged).",
      "hide.reason": "Reason (shown in the history)",
      "hide.confirm": "Hide",
      "hide.cancel": "Cancel",
      "hide.done": "Hidden from the chatbot.",
      "hide.shownDone": "Visible to the chatbot again.",
      "history.chunk": "chunk {number}",

      "problem.401": "This key was refused. Sign in again with a valid API key.",
      "problem.403": "This key may not do this: it lacks the '{scope}' scope. Ask the operators "
        + "for a key with that scope.",
      "problem.413": "Refused: too large (max {limit}).",
      "problem.413NoLimit": "Refused: too large.",
      "problem.415": "Refused: not a Markdown, text, PDF, Word (.docx) or HTML file (judged by "
        + "its content, not its name).",
      "problem.404": "This document does not exist (any more).",
      "problem.422": "Refused: {detail}",
      "problem.422Default": "the request is not valid",
      "problem.empty": "Refused: the file is empty.",
      "problem.503": "The service is unavailable for a moment. Nothing was stored; try again "
        + "shortly.",
      "problem.index_unavailable": "The search index cannot be reached right now. Nothing was "
        + "lost; try again in a few seconds.",
      "problem.qdrant_locked": "The search index cannot be reached right now: another process "
        + "holds it. Try again later; if it stays so, ask the support team.",
      "problem.embedding_unavailable": "The question could not be processed right now: the "
        + "embedding service does not answer. Try again shortly; if it stays so, ask the "
        + "support team.",
      "problem.0": "No answer from the server: check your connection and try again.",
      "problem.error": "Error",

      // The server's messages are English already and name the exact cause, so in English
      // they are shown as they are; these explanations stand in when a failure has none.
      "errors.front_matter_refused": "The front matter (the YAML between the --- lines at the "
        + "top) was refused: no YAML anchors or aliases, at most 64 KB and 20 levels deep, and "
        + "only dates that exist (such as 2024-05-01; quote other values). Change it and upload "
        + "again.",
      "errors.tags_refused": "Too many tags or a tag too long: at most 100 tags of at most 100 "
        + "characters each.",
      "errors.url_refused": "The web address (source URL, or url in the front matter) must start "
        + "with http:// or https://.",
      "errors.invalid_field": "A field holds characters or numbers that cannot be stored (a NUL "
        + "character, a lone surrogate, NaN or a number too large).",
      "errors.empty_document": "This version has no text to index (only front matter, or nothing "
        + "readable). The previous version stays searchable. To empty the document on purpose, "
        + "delete it or upload with allow_empty=true (a key with the delete scope).",
    },
  };

  function stored() {
    try {
      return localStorage.getItem(STORAGE);
    } catch (_) {
      return null;
    }
  }

  let lang = LANGUAGES.includes(stored()) ? stored() : "nl";

  function t(key, params) {
    const text = tables[lang][key] ?? tables.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (whole, name) =>
      (params && params[name] !== undefined ? String(params[name]) : whole));
  }

  function has(key) {
    return key in tables[lang] || key in tables.en;
  }

  // A chunk's block kind and a document's source, in words (the code itself when unknown).
  const kind = (name) => (has(`kind.${name}`) && lang !== "en" ? t(`kind.${name}`) : name);
  const mediaType = (name) => (has(`media.${name}`) && lang !== "en" ? t(`media.${name}`) : name);
  const actor = (name) => (has(`actor.${name}`) && lang !== "en" ? t(`actor.${name}`) : name);
  const source = (name) => (has(`source.${name}`) && lang !== "en" ? t(`source.${name}`) : name);

  // The notes the service writes on its history events (shared/repository, the reaper) are
  // English; on the Dutch page the known ones are said in Dutch.
  const DETAILS = [
    [/^same content as version (\d+)$/, "detail.sameContent"],
    [/^fetched page is the same as version (\d+)$/, "detail.samePage"],
    [/^version (\d+) indexed$/, "detail.indexed"],
    [/^version (\d+) arrived$/, "detail.arrived"],
    [/^document (?:removed|deleted)$/, "detail.removed"],
    [/^the task working on it stopped \(its lease ran out\): sent again$/, "detail.leaseRanOut"],
    [/^no task for (\d+)s: sent again$/, "detail.noTask"],
    [/^metadata updated: ([a-z_, ]+)$/, "detail.metadata"],
    [/^fields written on (\d+) points, nothing embedded$/, "detail.relabelled"],
  ];
  // "title, tags" -> "titel, labels"
  const fieldNames = (names) => (names || "").split(", ")
    .map((name) => (has(`field.${name}`) ? t(`field.${name}`) : name)).join(", ");
  function detail(text) {
    if (lang === "en" || !text) return text;
    for (const [pattern, key] of DETAILS) {
      const match = pattern.exec(text);
      if (match) {
        return t(key, { number: match[1], seconds: match[1], fields: fieldNames(match[1]) });
      }
    }
    return text;
  }

  // Static texts of the page (index.html and anything else marked up the same way).
  function apply(root = document) {
    document.documentElement.lang = lang;
    for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const [attribute, data] of [["aria-label", "i18nAriaLabel"],
      ["placeholder", "i18nPlaceholder"], ["title", "i18nTitle"]]) {
      for (const node of root.querySelectorAll(`[data-i18n-${attribute}]`)) {
        node.setAttribute(attribute, t(node.dataset[data]));
      }
    }
  }

  function setLang(next) {
    if (!LANGUAGES.includes(next) || next === lang) return;
    lang = next;
    try {
      localStorage.setItem(STORAGE, next);
    } catch (_) { /* private mode: the choice lasts for this page only */ }
    apply();
    for (const listener of listeners) listener(lang);
  }

  function add(more) {
    for (const [language, words] of Object.entries(more)) {
      tables[language] = { ...(tables[language] || {}), ...words };
    }
  }

  return {
    t,
    has,
    fieldNames,
    kind,
    actor,
    mediaType,
    source,
    detail,
    apply,
    add,
    setLang,
    onChange: (listener) => listeners.push(listener),
    get lang() { return lang; },
    get locale() { return LOCALES[lang]; },
    LANGUAGES,
  };
})();
