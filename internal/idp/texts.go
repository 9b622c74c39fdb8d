package idp

import "strings"

// Texts are the visible strings of the login pages in one language.
type Texts struct {
	Title, Heading, Email, Password, Submit, Wrong, TooMany, Expired, BadForm, Failed string
	ErrorTitle, UnknownClient, BadRedirect, BadConnection                             string
	Forgot, ResetHeading, ResetSend, ResetSent, NewPassword, ResetSave, ResetDone     string
	ResetBad, ResetSubject, ResetBody                                                 string
}

// Languages are the page languages the login page speaks (the contract's
// `language` parameter); any other value shows English.
var Languages = []string{"nb", "nn", "sv", "da", "fi", "en"}

// Language maps a requested language to one the page speaks.
func Language(code string) string {
	code = strings.ToLower(strings.TrimSpace(code))
	if code == "no" {
		code = "nb"
	}
	if _, ok := texts[code]; ok {
		return code
	}
	return "en"
}

var texts = map[string]Texts{
	"en": {Title: "Log in", Heading: "Log in", Email: "E-mail address", Password: "Password", Submit: "Log in",
		Wrong: "Wrong e-mail address or password.", TooMany: "Too many attempts. Wait a moment and try again.",
		Expired: "This login has expired. Go back to the site and start again.", BadForm: "The form could not be accepted. Go back to the site and start again.",
		Failed: "Something went wrong. Try again later.", ErrorTitle: "Login error", UnknownClient: "Unknown application.",
		BadRedirect: "The application's return address is not registered.", BadConnection: "This application does not log in to that organization.",
		Forgot: "Forgot your password?", ResetHeading: "Reset password", ResetSend: "Send reset link",
		ResetSent:   "If the address belongs to an account, a link to set a new password is on its way.",
		NewPassword: "New password", ResetSave: "Save password", ResetDone: "Your password is changed. Go back to the site and log in.",
		ResetBad: "This link is invalid or has expired.", ResetSubject: "Reset your password",
		ResetBody: "Open this link to choose a new password. It works once and expires in an hour:"},
	"nb": {Title: "Logg inn", Heading: "Logg inn", Email: "E-postadresse", Password: "Passord", Submit: "Logg inn",
		Wrong: "Feil e-postadresse eller passord.", TooMany: "For mange forsøk. Vent litt og prøv igjen.",
		Expired: "Innloggingen er utløpt. Gå tilbake til nettstedet og begynn på nytt.", BadForm: "Skjemaet kunne ikke godtas. Gå tilbake til nettstedet og begynn på nytt.",
		Failed: "Noe gikk galt. Prøv igjen senere.", ErrorTitle: "Feil ved innlogging", UnknownClient: "Ukjent applikasjon.",
		BadRedirect: "Applikasjonens returadresse er ikke registrert.", BadConnection: "Denne applikasjonen logger ikke inn hos den organisasjonen.",
		Forgot: "Glemt passordet?", ResetHeading: "Tilbakestill passord", ResetSend: "Send lenke",
		ResetSent:   "Hvis adressen hører til en konto, er en lenke for å velge nytt passord på vei.",
		NewPassword: "Nytt passord", ResetSave: "Lagre passord", ResetDone: "Passordet er endret. Gå tilbake til nettstedet og logg inn.",
		ResetBad: "Lenken er ugyldig eller utløpt.", ResetSubject: "Tilbakestill passordet ditt",
		ResetBody: "Åpne lenken for å velge nytt passord. Den virker én gang og utløper om en time:"},
	"nn": {Title: "Logg inn", Heading: "Logg inn", Email: "E-postadresse", Password: "Passord", Submit: "Logg inn",
		Wrong: "Feil e-postadresse eller passord.", TooMany: "For mange forsøk. Vent litt og prøv igjen.",
		Expired: "Innlogginga er gått ut. Gå attende til nettstaden og byrj på nytt.", BadForm: "Skjemaet kunne ikkje godtakast. Gå attende til nettstaden og byrj på nytt.",
		Failed: "Noko gjekk gale. Prøv igjen seinare.", ErrorTitle: "Feil ved innlogging", UnknownClient: "Ukjend applikasjon.",
		BadRedirect: "Returadressa til applikasjonen er ikkje registrert.", BadConnection: "Denne applikasjonen loggar ikkje inn hjå den organisasjonen.",
		Forgot: "Gløymt passordet?", ResetHeading: "Tilbakestill passord", ResetSend: "Send lenkje",
		ResetSent:   "Om adressa høyrer til ein konto, er ei lenkje for å velje nytt passord på veg.",
		NewPassword: "Nytt passord", ResetSave: "Lagre passord", ResetDone: "Passordet er endra. Gå attende til nettstaden og logg inn.",
		ResetBad: "Lenkja er ugyldig eller gått ut.", ResetSubject: "Tilbakestill passordet ditt",
		ResetBody: "Opne lenkja for å velje nytt passord. Ho verkar éin gong og går ut om ein time:"},
	"sv": {Title: "Logga in", Heading: "Logga in", Email: "E-postadress", Password: "Lösenord", Submit: "Logga in",
		Wrong: "Fel e-postadress eller lösenord.", TooMany: "För många försök. Vänta en stund och försök igen.",
		Expired: "Inloggningen har gått ut. Gå tillbaka till webbplatsen och börja om.", BadForm: "Formuläret kunde inte tas emot. Gå tillbaka till webbplatsen och börja om.",
		Failed: "Något gick fel. Försök igen senare.", ErrorTitle: "Inloggningsfel", UnknownClient: "Okänd applikation.",
		BadRedirect: "Applikationens returadress är inte registrerad.", BadConnection: "Den här applikationen loggar inte in hos den organisationen.",
		Forgot: "Glömt lösenordet?", ResetHeading: "Återställ lösenord", ResetSend: "Skicka länk",
		ResetSent:   "Om adressen hör till ett konto är en länk för att välja nytt lösenord på väg.",
		NewPassword: "Nytt lösenord", ResetSave: "Spara lösenord", ResetDone: "Lösenordet är ändrat. Gå tillbaka till webbplatsen och logga in.",
		ResetBad: "Länken är ogiltig eller har gått ut.", ResetSubject: "Återställ ditt lösenord",
		ResetBody: "Öppna länken för att välja ett nytt lösenord. Den fungerar en gång och går ut om en timme:"},
	"da": {Title: "Log ind", Heading: "Log ind", Email: "E-mailadresse", Password: "Adgangskode", Submit: "Log ind",
		Wrong: "Forkert e-mailadresse eller adgangskode.", TooMany: "For mange forsøg. Vent lidt og prøv igen.",
		Expired: "Login er udløbet. Gå tilbage til webstedet og start forfra.", BadForm: "Formularen kunne ikke modtages. Gå tilbage til webstedet og start forfra.",
		Failed: "Noget gik galt. Prøv igen senere.", ErrorTitle: "Loginfejl", UnknownClient: "Ukendt applikation.",
		BadRedirect: "Applikationens returadresse er ikke registreret.", BadConnection: "Denne applikation logger ikke ind hos den organisation.",
		Forgot: "Glemt adgangskoden?", ResetHeading: "Nulstil adgangskode", ResetSend: "Send link",
		ResetSent:   "Hvis adressen hører til en konto, er et link til at vælge en ny adgangskode på vej.",
		NewPassword: "Ny adgangskode", ResetSave: "Gem adgangskode", ResetDone: "Adgangskoden er ændret. Gå tilbage til webstedet og log ind.",
		ResetBad: "Linket er ugyldigt eller udløbet.", ResetSubject: "Nulstil din adgangskode",
		ResetBody: "Åbn linket for at vælge en ny adgangskode. Det virker én gang og udløber om en time:"},
	"fi": {Title: "Kirjaudu sisään", Heading: "Kirjaudu sisään", Email: "Sähköpostiosoite", Password: "Salasana", Submit: "Kirjaudu",
		Wrong: "Väärä sähköpostiosoite tai salasana.", TooMany: "Liian monta yritystä. Odota hetki ja yritä uudelleen.",
		Expired: "Kirjautuminen on vanhentunut. Palaa sivustolle ja aloita alusta.", BadForm: "Lomaketta ei voitu hyväksyä. Palaa sivustolle ja aloita alusta.",
		Failed: "Jokin meni vikaan. Yritä myöhemmin uudelleen.", ErrorTitle: "Kirjautumisvirhe", UnknownClient: "Tuntematon sovellus.",
		BadRedirect: "Sovelluksen paluuosoitetta ei ole rekisteröity.", BadConnection: "Tämä sovellus ei kirjaudu kyseiseen organisaatioon.",
		Forgot: "Unohditko salasanan?", ResetHeading: "Palauta salasana", ResetSend: "Lähetä linkki",
		ResetSent:   "Jos osoite kuuluu tilille, linkki uuden salasanan valintaan on matkalla.",
		NewPassword: "Uusi salasana", ResetSave: "Tallenna salasana", ResetDone: "Salasana on vaihdettu. Palaa sivustolle ja kirjaudu sisään.",
		ResetBad: "Linkki on virheellinen tai vanhentunut.", ResetSubject: "Palauta salasanasi",
		ResetBody: "Avaa linkki valitaksesi uuden salasanan. Se toimii kerran ja vanhenee tunnissa:"},
}
