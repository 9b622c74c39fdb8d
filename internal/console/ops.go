package console

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webhook"
	"github.com/kadens/kadens/internal/webui"
)

// cancelOnDate is the cancel form's third mode: access ends at the start
// of a chosen day (the API's cancellationTime).
const cancelOnDate = "OnDate"

// cancelForm is the cancel form as given.
type cancelForm struct {
	Mode, At, Reason string
}

// cancellationOf reads the cancel form: the cancellation, or the text key
// of what to correct.
func (c *Console) cancellationOf(r *http.Request) (cancelForm, app.Cancellation, string) {
	f := cancelForm{Mode: r.PostFormValue("mode"), At: strings.TrimSpace(r.PostFormValue("at")), Reason: strings.TrimSpace(r.PostFormValue("reason"))}
	cn := app.Cancellation{Mode: f.Mode, Reason: f.Reason}
	switch f.Mode {
	case engine.CancelEndOfPeriod, engine.CancelImmediately:
	case cancelOnDate:
		d, err := time.ParseInLocation(time.DateOnly, f.At, c.zone)
		if err != nil {
			return f, cn, "cancelDate"
		}
		d = d.Add(12 * time.Hour) // midday: the same day in every Nordic zone
		cn.Mode, cn.At = "", &d
	default:
		return f, cn, "cancelMode"
	}
	if len(f.Reason) > 500 || validation.TextProblem(f.Reason, false) != "" {
		return f, cn, "cancelReason"
	}
	return f, cn, ""
}

// cancelPreviewView is the cancel confirmation page's data: what the
// cancellation as asked would cancel, credit and give back.
type cancelPreviewView struct {
	Subscription store.Subscription
	Form         cancelForm
	Preview      app.CancellationPreview
}

// cancelPreview answers the cancel form with the confirmation page: the
// cancellation's own preview (App.CancellationPreview: the periods it
// cancels, when access ends, the credit note's lines or the allowances),
// and a form that confirms it. A cancellation the engine would refuse is
// refused here already.
func (c *Console) cancelPreview(w http.ResponseWriter, r *http.Request, s *session) {
	c.cancelling(w, r, s, true)
}

// cancel cancels a subscription (the confirmation page's form) through
// the same application function as the API's cancel; the staff user is
// the events' actor.
func (c *Console) cancel(w http.ResponseWriter, r *http.Request, s *session) {
	c.cancelling(w, r, s, false)
}

func (c *Console) cancelling(w http.ResponseWriter, r *http.Request, s *session, preview bool) {
	if c.badID(w, r, s) {
		return
	}
	id := r.PathValue("id")
	f, cn, problem := c.cancellationOf(r)
	if problem == "" {
		var (
			p   app.CancellationPreview
			err error
		)
		if preview {
			p, err = c.app.CancellationPreview(r.Context(), id, cn)
		} else {
			_, _, err = c.app.CancelSubscription(r.Context(), id, cn)
		}
		var invalid validation.Errors
		switch {
		case err == nil && !preview:
			http.Redirect(w, r, Prefix+"/subscription/"+id+"?done=cancelled", http.StatusSeeOther)
			return
		case err == nil:
			sub, err := c.app.Subscription(r.Context(), id)
			if c.notFound(w, r, s, err) {
				return
			}
			c.render(w, r, s, http.StatusOK, "cancelpreview", page{Page: webui.Page{Title: texts[c.languages().Choose(w, r)]["cancelPreview"], Data: cancelPreviewView{Subscription: sub, Form: f, Preview: p}}})
			return
		case errors.As(err, &invalid):
			problem = "cancelRefused"
			for _, fe := range invalid {
				if fe.Field == "cancellationTime" {
					problem = "cancelDateRefused"
				}
			}
		case c.notFound(w, r, s, err):
			return
		}
	}
	c.refused(w, r, s, id, problem)
}

// undoCancel takes back a cancellation that has not taken effect through
// the API's own function (App.UndoCancellation); one the engine refuses
// (it took effect or settled money) answers the subscription page with
// the reason to order anew.
func (c *Console) undoCancel(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	id := r.PathValue("id")
	_, _, err := c.app.UndoCancellation(r.Context(), id)
	var invalid validation.Errors
	switch {
	case err == nil:
		http.Redirect(w, r, Prefix+"/subscription/"+id+"?done=undone", http.StatusSeeOther)
	case errors.As(err, &invalid):
		c.refused(w, r, s, id, "undoRefused")
	default:
		c.notFound(w, r, s, err)
	}
}

// webhookRow is a webhook with its delivery log.
type webhookRow struct {
	webhook.Webhook
	Deliveries []deliveryRow
	More       bool
}

// deliveryRow is a delivery with what its last attempt got back.
type deliveryRow struct {
	webhook.WebhookDelivery
	LastStatus *int
	LastError  string
}

// deliveriesShown bounds each webhook's log on the page.
const deliveriesShown = 50

// webhooks lists the tenant's webhooks, each with its delivery log: the
// status, the attempts, the last attempt's answer or error and when the
// next attempt is due, and a button that sends a delivery again.
func (c *Console) webhooks(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	hooks, _, err := c.app.Webhooks(ctx, store.Page{Limit: pageLimit})
	if c.failed(w, r, s, err) {
		return
	}
	rows := make([]webhookRow, len(hooks))
	for i, h := range hooks {
		rows[i].Webhook = h
		ds, next, err := c.app.WebhookDeliveries(ctx, h.ID, webhook.DeliveryFilter{}, store.Page{Limit: deliveriesShown})
		if c.failed(w, r, s, err) {
			return
		}
		rows[i].More = next != ""
		for j := len(ds) - 1; j >= 0; j-- { // newest first
			d := deliveryRow{WebhookDelivery: ds[j]}
			if n := len(ds[j].Attempts); n > 0 {
				d.LastStatus, d.LastError = ds[j].Attempts[n-1].StatusCode, ds[j].Attempts[n-1].Error
			}
			rows[i].Deliveries = append(rows[i].Deliveries, d)
		}
	}
	p := page{Page: webui.Page{Data: rows}}
	if r.URL.Query().Get("done") == "redelivered" {
		p.Notice = "redelivered"
	}
	c.render(w, r, s, http.StatusOK, "webhooks", p)
}

// redeliver queues a delivery again through the API's own function
// (App.RedeliverWebhook): due now, its retries starting over.
func (c *Console) redeliver(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	if !store.ValidID(r.PathValue("delivery")) {
		c.fail(w, r, s, http.StatusBadRequest, "badID")
		return
	}
	if c.notFound(w, r, s, c.app.RedeliverWebhook(r.Context(), r.PathValue("id"), r.PathValue("delivery"))) {
		return
	}
	http.Redirect(w, r, Prefix+"/webhooks?done=redelivered#delivery-"+r.PathValue("delivery"), http.StatusSeeOther)
}

// clockView is the test clock page's data.
type clockView struct {
	Now  time.Time
	To   string
	Done *engine.Stats
}

// testTenant answers a tenant on real time with the 404 page: it has no
// clock to move, and the page does not exist for it.
func (c *Console) testTenant(w http.ResponseWriter, r *http.Request, s *session) bool {
	if s.Tenant.Test {
		return true
	}
	c.fail(w, r, s, http.StatusNotFound, "notFound")
	return false
}

// clock shows a test tenant's clock and the form that moves it.
func (c *Console) clock(w http.ResponseWriter, r *http.Request, s *session) {
	if !c.testTenant(w, r, s) {
		return
	}
	now, err := c.app.Now(r.Context())
	if c.failed(w, r, s, err) {
		return
	}
	c.render(w, r, s, http.StatusOK, "clock", page{Page: webui.Page{Data: clockView{Now: now, To: now.In(c.zone).AddDate(0, 0, 1).Format(time.DateOnly)}}})
}

// advanceClock moves a test tenant's clock to the start of the day given
// (App.AdvanceTestClock, the API's POST /testclock/advance): everything
// due until then runs, and the page shows what was done.
func (c *Console) advanceClock(w http.ResponseWriter, r *http.Request, s *session) {
	if !c.testTenant(w, r, s) {
		return
	}
	ctx := r.Context()
	v := clockView{To: strings.TrimSpace(r.PostFormValue("to"))}
	again := func(status int, key string) {
		now, err := c.app.Now(ctx)
		if c.failed(w, r, s, err) {
			return
		}
		v.Now = now
		c.render(w, r, s, status, "clock", page{Page: webui.Page{Data: v, Error: key}})
	}
	to, err := time.ParseInLocation(time.DateOnly, v.To, c.zone)
	if err != nil {
		again(http.StatusBadRequest, "clockDate")
		return
	}
	stats, err := c.app.AdvanceTestClock(ctx, to)
	var invalid validation.Errors
	switch {
	case errors.As(err, &invalid):
		again(http.StatusBadRequest, "clockRefused")
		return
	case errors.Is(err, engine.ErrBusy):
		again(http.StatusConflict, "clockBusy")
		return
	case c.failed(w, r, s, err):
		return
	}
	v.Done = &stats
	now, err := c.app.Now(ctx)
	if c.failed(w, r, s, err) {
		return
	}
	v.Now = now
	c.render(w, r, s, http.StatusOK, "clock", page{Page: webui.Page{Data: v, Notice: "clockAdvanced"}})
}
