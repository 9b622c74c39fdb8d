package autogiro

import (
	"time"

	"github.com/kadens/kadens/internal/bankday"
)

// Bankgirot works on Swedish banking days (bankday.Sweden). A payment date
// that is not a banking day is moved by Bankgirot to the next one.

// LeadDays is how many banking days before the payment date a payment
// order must reach Bankgirot. The manual's deadline is the banking day
// before the payment date; Kadens keeps one more day for the file to be
// sealed and sent, so an export run on day D can carry payments of D+2.
const LeadDays = 2

// PaymentDate is the date a debit due on due is sent for, when it is
// ordered on today: the due date, moved to the next banking day if it is
// not one (Bankgirot would move it anyway, and a file should say what will
// happen), but never earlier than LeadDays banking days after today.
func PaymentDate(due, today time.Time) time.Time {
	d := bankday.Sweden.Next(due)
	if earliest := bankday.Sweden.After(today, LeadDays); d.Before(earliest) {
		return earliest
	}
	return d
}
