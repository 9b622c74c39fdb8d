package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// ValidationResult is the ValidationResultModel body of every 400.
type ValidationResult struct {
	Message string                  `json:"message" example:"Validation Failed"`
	Errors  []validation.FieldError `json:"errors"`
}

// ServerError is the body of a 500: a code, a message and the request id to
// quote when reporting the problem.
type ServerError struct {
	Code      string `json:"code" example:"internal_error"`
	Message   string `json:"message"`
	RequestID string `json:"requestId"`
}

// statusError answers with a fixed status and no body (401, 403, 404, 409, 413, 422).
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

var (
	errUnauthorized = &statusError{http.StatusUnauthorized, "unauthorized"}
	errForbidden    = &statusError{http.StatusForbidden, "forbidden"}
)

// writeError turns a handler error into the response the conventions
// prescribe: 400 with a ValidationResultModel, an empty 401/403/404, a
// JSON 507 when the storage is full, or a JSON 500 carrying the request id
// (the cause is logged, never shown).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		verrs validation.Errors
		se    *statusError
		mbe   *http.MaxBytesError
	)
	switch {
	case errors.As(err, &verrs):
		apikit.WriteJSON(w, http.StatusBadRequest, ValidationResult{Message: "Validation Failed", Errors: verrs})
	case errors.As(err, &mbe):
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	case errors.As(err, &se):
		w.WriteHeader(se.status)
	case errors.Is(err, store.ErrNotFound):
		w.WriteHeader(http.StatusNotFound)
	case errors.Is(err, store.ErrConflict):
		// Handlers turn conflicts they can name into a 400 on the field;
		// one that reaches here is a concurrent change of the same thing.
		w.WriteHeader(http.StatusConflict)
	case store.IsDiskFull(err):
		// Nothing of the request was stored (its transaction rolled
		// back); the operator has to make room. Said as such, with the
		// request id, rather than as an unexplained 500.
		id := requestID(r.Context())
		logger(r.Context()).ErrorContext(r.Context(), "storage full: request refused", slog.String("err", err.Error()))
		apikit.WriteJSON(w, http.StatusInsufficientStorage, ServerError{
			Code:      "insufficient_storage",
			Message:   "The server's storage is full, so nothing of this request was saved. Try again later; if it persists, tell the operator (quote the request id).",
			RequestID: id,
		})
	case r.Context().Err() != nil:
		// The client went away (or the server is stopping); there is no
		// one to answer. 499 records it without counting a server error.
		logger(r.Context()).DebugContext(r.Context(), "request abandoned", slog.String("err", err.Error()))
		w.WriteHeader(499)
	default:
		id := requestID(r.Context())
		logger(r.Context()).ErrorContext(r.Context(), "request failed", slog.String("err", err.Error()))
		apikit.WriteJSON(w, http.StatusInternalServerError, ServerError{
			Code:      "internal_error",
			Message:   "The server failed to handle the request. Quote the request id when reporting it.",
			RequestID: id,
		})
	}
}
