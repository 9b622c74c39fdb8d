// Package apikit is the main API's handler kit: how an operation is
// declared (Route, Response), how its input is read (DecodeJSON, Text,
// PathID, Page, …) and how it answers (WriteJSON, Env.Created,
// Env.WriteList). It lives apart from package api so that a wing (a
// payment provider such as autogiro or avtalegiro) can keep its own API
// file beside its rules and its SQL: the wing declares its routes with
// this kit, and api serves and documents them with the same middleware and
// conventions as its own (api.addKit). The kit imports no wing and not api.
package apikit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// HandlerFunc is an API handler: it writes a success response or returns an
// error that the API turns into the conventional response (400 with every
// problem, an empty 404, …).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one operation a wing serves: how it is handled and how it is
// documented. The API adds the responses every authenticated operation can
// give (400, 401, 403, 500) after Responses; wings' routes are
// administrative (machine and administrative tokens only).
type Route struct {
	Method  string
	Path    string // OpenAPI form: /autogiro/account/{id}
	ID      string // operationId
	Tag     string
	Summary string
	Desc    string
	// Request documents path, query and header parameters (struct tags
	// path:"", query:"", header:"") and the JSON body (json tags).
	Request any
	// Params documents the path parameters of a request whose body is not
	// an object (Request is then the body alone, e.g. an array).
	Params any
	// Responses by status; a nil Body means no body.
	Responses []Response
	Handle    HandlerFunc
	// RawBody is the media type of a request body that is not JSON
	// (documented as a binary string); MaxBody overrides the body limit.
	RawBody string
	MaxBody int64
}

// Response documents one answer of an operation.
type Response struct {
	Status  int
	Body    any
	Desc    string
	Headers map[string]string // name → description
	// ContentType overrides application/json.
	ContentType string
}

// The answers many operations give, worded once.
var (
	Created = Response{Status: http.StatusCreated, Body: "", Desc: "Created; the body is the new id (a JSON string).",
		Headers: map[string]string{"Location": "Address of the new resource."}}
	NotFound  = Response{Status: http.StatusNotFound, Desc: "No such resource in this tenant."}
	NoContent = Response{Status: http.StatusNoContent, Desc: "Done."}
)

// OK documents a 200 answer with body.
func OK(body any) Response { return Response{Status: http.StatusOK, Body: body} }

// List documents a 200 list answer with body, paged by the Link header.
func List(body any) Response {
	return Response{Status: http.StatusOK, Body: body,
		Headers: map[string]string{"Link": `RFC 8288 link to the next page (rel="next"), when there is one.`}}
}

// Env is what a wing's handlers may use of the server that serves them.
type Env struct {
	Store *store.Store
	// Now is the wall clock (UTC): when a record was written.
	Now func() time.Time
	// TenantNow is the request tenant's time: its own clock for a test
	// tenant, else the wall clock. Business dates (due dates, lead times,
	// what is pending) follow it.
	TenantNow func(context.Context) (time.Time, error)
	// BaseURL is the API's public address without a trailing slash.
	BaseURL string
	// Egress is the policy an address Kadens will call is checked against
	// when it is registered.
	Egress egress.Policy
	// BodyLimit is the request body limit of routes without their own.
	BodyLimit int64
}

// Created answers 201 with the new id as a JSON string and its Location.
func (e Env) Created(w http.ResponseWriter, location, id string) {
	w.Header().Set("Location", e.BaseURL+location)
	WriteJSON(w, http.StatusCreated, id)
}

// WriteList answers with a page of items and, when more follow, an RFC 8288
// Link header pointing at the next page.
func (e Env) WriteList(w http.ResponseWriter, r *http.Request, items any, next string) {
	e.SetNextLink(w, r, next)
	WriteJSON(w, http.StatusOK, items)
}

// SetNextLink sets the Link header to the page after next, if any.
func (e Env) SetNextLink(w http.ResponseWriter, r *http.Request, next string) {
	if next != "" {
		q := r.URL.Query()
		q.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(next)))
		w.Header().Set("Link", "<"+e.BaseURL+r.URL.Path+"?"+q.Encode()+`>; rel="next"`)
	}
}

// WriteJSON writes v as the JSON body with status. A nil slice (an empty
// page) is written as [], never null: the contract says lists are arrays.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.IsNil() {
		_, _ = w.Write([]byte("[]\n"))
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// GetOne answers GET /…/{id} with the record fetch returns for the id.
func GetOne[T any](fetch func(context.Context, string) (T, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := PathID(r, "id")
		if err != nil {
			return err
		}
		v, err := fetch(r.Context(), id)
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, v)
		return nil
	}
}

// IDParam documents the {id} path parameter of single-resource routes.
type IDParam struct {
	ID string `path:"id" format:"uuid"`
}

// PathID returns the named path value, answering 400 when it is not a uuid.
func PathID(r *http.Request, name string) (string, error) {
	// Ids are stored in canonical lower case; accept any case from clients.
	id := strings.ToLower(r.PathValue(name))
	if !store.ValidID(id) {
		return "", validation.Field(name, "must be a uuid")
	}
	return id, nil
}

// MediaOctet is the media type of a file's bytes (a bank file up or down).
const MediaOctet = "application/octet-stream"
