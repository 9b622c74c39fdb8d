package api

import (
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
)

// The API's side of the handler kit (internal/apikit): the wings declare
// their operations as apikit routes, and the API serves and documents
// them exactly as its own.

// addKit registers a wing's routes. They are administrative operations,
// so they give the responses every authenticated operation can give after
// their own (common).
func (s *Server) addKit(rts []apikit.Route) {
	for _, rt := range rts {
		rs := make([]response, len(rt.Responses))
		for i, r := range rt.Responses {
			rs[i] = fromKit(r)
		}
		s.add(route{method: rt.Method, path: rt.Path, id: rt.ID, tag: rt.Tag, summary: rt.Summary, desc: rt.Desc,
			request: rt.Request, params: rt.Params, responses: common(rs...), handle: rt.Handle,
			rawBody: rt.RawBody, maxBody: rt.MaxBody})
	}
}

func fromKit(r apikit.Response) response {
	return response{status: r.Status, body: r.Body, desc: r.Desc, headers: r.Headers, contentType: r.ContentType}
}

// respOK documents a 200 answer with body.
func respOK(body any) response { return fromKit(apikit.OK(body)) }

// respList documents a 200 list answer with body, paged by the Link header.
func respList(body any) response { return fromKit(apikit.List(body)) }

// created answers 201 with the new id as a JSON string and its Location.
func (s *Server) created(w http.ResponseWriter, location, id string) {
	s.kit.Created(w, location, id)
}

// writeList answers with a page of items and, when more follow, a Link
// header to the next page.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, items any, next string) {
	s.kit.WriteList(w, r, items, next)
}
