package console

// opsTexts are the texts of the cancel confirmation, webhook, test clock
// and subscriber detail pages, merged into texts (TestTextsComplete checks
// the merged set).
var opsTexts = map[string]map[string]string{
	"en": {
		"cancelOnDate": "From a chosen day", "cancelAtLabel": "The day access ends (for “From a chosen day”)",
		"cancelPreviewButton": "Show what cancelling does", "cancelPreview": "Confirm the cancellation",
		"cancelPreviewHint": "This is what the cancellation will do if you confirm it now. Nothing has changed yet.",
		"accessEnds":        "Access ends", "accessEndsNow": "Now", "daysUsed": "Days used of the period",
		"previewCreditNote": "Credit note to be issued", "creditReason.Cancellation": "the period never started",
		"creditReason.Proration": "the unused days", "previewAllowance": "Credit for the unused days, applied to the next invoices",
		"previewNothing": "Nothing is credited or charged: the period is used to its end.",
		"cancelConfirm":  "Confirm cancellation", "cancelKeep": "Keep the subscription",
		"cancelDate":        "Give the day access ends as a date (YYYY-MM-DD).",
		"cancelDateRefused": "That day cannot be chosen: it must be a later day than today, within the periods invoiced so far.",

		"webhooks": "Webhooks", "webhook.Pending": "Waiting for validation", "webhook.Validated": "Validated",
		"webhookFormat": "Format", "webhookEvents": "Events", "deliveryLog": "Deliveries (newest first)", "created": "Created",
		"attempts": "Attempts", "lastAnswer": "Last answer", "nextAttempt": "Next attempt",
		"delivery.Pending": "Waiting", "delivery.Delivered": "Delivered", "delivery.Failed": "Failed",
		"redeliver": "Send again", "moreDeliveries": "Only the first 50 deliveries are shown.",
		"noDeliveries": "Nothing has been delivered yet.", "noWebhooks": "The organisation has no webhooks. They are registered through the API (POST /webhook).",
		"redelivered": "The delivery is queued and will be sent again shortly.",

		"clock": "Test clock", "clockHint": "This is a test organisation: its time moves only when you move it. Moving it runs every renewal, reminder, plan change and cancellation due until then.",
		"clockNow": "The organisation's time", "clockDone": "Done while the clock moved",
		"clock.renewals": "Renewals", "clock.deactivations": "Subscriptions ended", "clock.planChanges": "Plan changes",
		"clock.reminders": "Reminders", "clock.paymentStops": "Payment stops", "clock.priceChangeNotices": "Price change notices",
		"clockAdvance": "Move the clock", "clockTo": "Move to the start of", "clockToHint": "A day after the organisation's time (YYYY-MM-DD, Norwegian time).",
		"clockButton": "Move the clock", "clockDate": "Give the day as a date (YYYY-MM-DD).",
		"clockRefused": "The clock only moves forward: choose a later day.", "clockBusy": "The clock is being moved already. Try again in a moment.",
		"clockAdvanced": "The clock has moved.",

		"contacts": "Contacts", "noContacts": "No contacts.", "addresses": "Addresses", "accounts": "Account",
		"balance": "Balance", "outstandingCharges": "Charges to invoice", "availableAllowance": "Credit to apply",
		"openItems": "Open items", "noOpenItems": "No open charges or credits.", "item.Charge": "Charge", "item.Allowance": "Credit",
		"remaining": "Remaining", "agreements": "Payment agreements and mandates", "noAgreements": "No payment agreements.",
		"agreementType": "Type", "mandate": "Mandate", "payments": "Payments", "noPayments": "No payments.", "reminders": "Reminders",
		"noReminders": "No reminders.", "creditNotes": "Credit notes", "noCreditNotes": "No credit notes.",
		"creditLinesHint": "Choose the lines to credit, and type an amount to credit part of a line (empty: all that is left of it). Choose none to credit all that is left of the invoice.",
		"creditLines":     "Lines to credit", "creditChoose": "Line", "credited": "Credited so far", "creditAmount": "Amount to credit",
		"creditLineProblem": "Some lines cannot be credited as asked: see the message beside each.",
		"subscriberUsers":   "Users and entitlements", "noSubscriberUsers": "No users.", "entitlements": "Entitlements",
	},
	"nb": {
		"cancelOnDate": "Fra en valgt dag", "cancelAtLabel": "Dagen tilgangen slutter (for «Fra en valgt dag»)",
		"cancelPreviewButton": "Vis hva oppsigelsen gjør", "cancelPreview": "Bekreft oppsigelsen",
		"cancelPreviewHint": "Slik blir oppsigelsen hvis du bekrefter den nå. Ingenting er endret ennå.",
		"accessEnds":        "Tilgangen slutter", "accessEndsNow": "Nå", "daysUsed": "Brukte dager av perioden",
		"previewCreditNote": "Kreditnota som utstedes", "creditReason.Cancellation": "perioden har ikke begynt",
		"creditReason.Proration": "de ubrukte dagene", "previewAllowance": "Tilgode for de ubrukte dagene, trekkes fra de neste fakturaene",
		"previewNothing": "Ingenting krediteres eller belastes: perioden brukes til den slutter.",
		"cancelConfirm":  "Bekreft oppsigelsen", "cancelKeep": "Behold abonnementet",
		"cancelDate":        "Oppgi dagen tilgangen slutter som en dato (ÅÅÅÅ-MM-DD).",
		"cancelDateRefused": "Den dagen kan ikke velges: den må være senere enn i dag og innenfor periodene som er fakturert.",

		"webhooks": "Webhooks", "webhook.Pending": "Venter på validering", "webhook.Validated": "Validert",
		"webhookFormat": "Format", "webhookEvents": "Hendelser", "deliveryLog": "Leveranser (nyeste først)", "created": "Opprettet",
		"attempts": "Forsøk", "lastAnswer": "Siste svar", "nextAttempt": "Neste forsøk",
		"delivery.Pending": "Venter", "delivery.Delivered": "Levert", "delivery.Failed": "Feilet",
		"redeliver": "Send på nytt", "moreDeliveries": "Bare de 50 første leveransene vises.",
		"noDeliveries": "Ingenting er levert ennå.", "noWebhooks": "Organisasjonen har ingen webhooks. De registreres gjennom API-et (POST /webhook).",
		"redelivered": "Leveransen er lagt i kø og sendes på nytt om litt.",

		"clock": "Testklokke", "clockHint": "Dette er en testorganisasjon: tiden går bare når du flytter den. Når den flyttes, kjøres alle fornyelser, purringer, planendringer og oppsigelser som forfaller innen da.",
		"clockNow": "Organisasjonens tid", "clockDone": "Utført mens klokken ble flyttet",
		"clock.renewals": "Fornyelser", "clock.deactivations": "Avsluttede abonnementer", "clock.planChanges": "Planendringer",
		"clock.reminders": "Purringer", "clock.paymentStops": "Betalingsstopp", "clock.priceChangeNotices": "Varsler om prisendring",
		"clockAdvance": "Flytt klokken", "clockTo": "Flytt til starten av", "clockToHint": "En dag etter organisasjonens tid (ÅÅÅÅ-MM-DD, norsk tid).",
		"clockButton": "Flytt klokken", "clockDate": "Oppgi dagen som en dato (ÅÅÅÅ-MM-DD).",
		"clockRefused": "Klokken går bare fremover: velg en senere dag.", "clockBusy": "Klokken flyttes allerede. Prøv igjen om et øyeblikk.",
		"clockAdvanced": "Klokken er flyttet.",

		"contacts": "Kontakter", "noContacts": "Ingen kontakter.", "addresses": "Adresser", "accounts": "Konto",
		"balance": "Saldo", "outstandingCharges": "Gebyrer som skal faktureres", "availableAllowance": "Tilgode som skal trekkes fra",
		"openItems": "Åpne poster", "noOpenItems": "Ingen åpne gebyrer eller tilgodehavender.", "item.Charge": "Gebyr", "item.Allowance": "Tilgode",
		"remaining": "Gjenstår", "agreements": "Betalingsavtaler og fullmakter", "noAgreements": "Ingen betalingsavtaler.",
		"agreementType": "Type", "mandate": "Fullmakt", "payments": "Betalinger", "noPayments": "Ingen betalinger.", "reminders": "Purringer",
		"noReminders": "Ingen purringer.", "creditNotes": "Kreditnotaer", "noCreditNotes": "Ingen kreditnotaer.",
		"creditLinesHint": "Velg linjene som skal krediteres, og skriv et beløp for å kreditere deler av en linje (tomt: alt som gjenstår av den). Velg ingen for å kreditere alt som gjenstår av fakturaen.",
		"creditLines":     "Linjer som krediteres", "creditChoose": "Linje", "credited": "Kreditert hittil", "creditAmount": "Beløp som krediteres",
		"creditLineProblem": "Noen linjer kan ikke krediteres slik: se meldingen ved hver av dem.",
		"subscriberUsers":   "Brukere og tilganger", "noSubscriberUsers": "Ingen brukere.", "entitlements": "Tilganger",
	},
}

func init() {
	for l, m := range opsTexts {
		for k, v := range m {
			if _, ok := texts[l][k]; !ok {
				texts[l][k] = v
			}
		}
	}
}
