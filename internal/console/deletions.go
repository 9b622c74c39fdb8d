package console

import (
	"errors"
	"net/http"
	"slices"

	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// deletionsView is the deletion requests page's data: the open requests,
// oldest first (the one to answer first on top), each with its
// subscriber, and the latest closed ones.
type deletionsView struct {
	Open   []deletionRow
	Closed []deletionRow
}

type deletionRow struct {
	privacy.Request
	Subscriber store.Subscriber
}

// deletions lists the subscribers' requests to delete their data, with a
// form on each open one that closes it (docs/MINSIDE.md, "Deletion
// requests").
func (c *Console) deletions(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := c.deletionsView(r)
	if c.failed(w, r, s, err) {
		return
	}
	p := page{Page: webui.Page{Data: v}}
	if r.URL.Query().Get("done") == "resolved" {
		p.Notice = "deletionResolved"
	}
	c.render(w, r, s, http.StatusOK, "deletions", p)
}

func (c *Console) deletionsView(r *http.Request) (deletionsView, error) {
	ctx := r.Context()
	var v deletionsView
	rows := func(f privacy.Filter) ([]deletionRow, error) {
		list, _, err := c.app.DeletionRequests(ctx, f, store.Page{Limit: pageLimit})
		if err != nil {
			return nil, err
		}
		out := make([]deletionRow, len(list))
		for i, req := range list {
			out[i].Request = req
			if out[i].Subscriber, err = c.app.Subscriber(ctx, req.SubscriberID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		return out, nil
	}
	var err error
	if v.Open, err = rows(privacy.Filter{Status: privacy.StatusOpen}); err != nil {
		return v, err
	}
	for _, st := range []string{privacy.StatusCompleted, privacy.StatusRejected} {
		closed, err := rows(privacy.Filter{Status: st})
		if err != nil {
			return v, err
		}
		v.Closed = append(v.Closed, closed...)
	}
	slices.SortFunc(v.Closed, func(a, b deletionRow) int { return b.ResolvedAt.Compare(*a.ResolvedAt) })
	return v, nil
}

// resolveDeletion closes an open request (App.ResolveDeletionRequest),
// the staff user recorded as who closed it. A form the rules refuse (no
// outcome, a rejection without why, a request closed already) answers
// the page with what to do (400).
func (c *Console) resolveDeletion(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	_, err := c.app.ResolveDeletionRequest(r.Context(), r.PathValue("id"), r.PostFormValue("status"), r.PostFormValue("resolution"))
	var invalid validation.Errors
	switch {
	case err == nil:
		http.Redirect(w, r, Prefix+"/deletions?done=resolved", http.StatusSeeOther)
	case errors.As(err, &invalid):
		v, err := c.deletionsView(r)
		if c.failed(w, r, s, err) {
			return
		}
		c.render(w, r, s, http.StatusBadRequest, "deletions", page{Page: webui.Page{Data: v, Error: "deletionRefused"}})
	default:
		c.notFound(w, r, s, err)
	}
}
