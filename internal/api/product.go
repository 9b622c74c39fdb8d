package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/swaggest/jsonschema-go"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/validation"
)

// ProductInput is the body of POST and PUT /product. Name and vatRate are
// required; a product is active unless said otherwise.
type ProductInput struct {
	Name        *string        `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Nordavis Digital"`
	Description *string        `json:"description" maxLength:"2000" example:"Every article, the e-paper and the archive"`
	Category    *string        `json:"category" maxLength:"100" example:"digital" description:"Free text that groups products (digital, print, magazine…) and filters lists."`
	VATRate     *apikit.Number `json:"vatRate" required:"true" description:"VAT rate in percent (0..100, up to 4 decimals) of invoice lines for this product. Norwegian news media are zero-rated: 0." example:"0"`
	Active      *bool          `json:"active" description:"Inactive products stay in the template packages that hold them but cannot be added to others. Default true."`
}

// product validates in and returns the product it describes, recording
// every problem at once.
func (in ProductInput) product() (catalog.Product, error) {
	var (
		errs validation.Errors
		p    = catalog.Product{Active: true}
	)
	p.Name = apikit.Text(&errs, "name", in.Name, 200, true)
	p.Description = apikit.Text(&errs, "description", in.Description, 2000, false)
	p.Category = apikit.Text(&errs, "category", in.Category, 100, false)
	if in.VATRate == nil {
		errs.Add("vatRate", "is required")
	} else if rate, ok := percent(&errs, "vatRate", *in.VATRate); ok {
		p.VATRate = rate
	}
	if in.Active != nil {
		p.Active = *in.Active
	}
	return p, errs.Err()
}

type productUpdate struct {
	apikit.IDParam
	ProductInput
}

type productListParams struct {
	apikit.ListParams
	Active   string `query:"active" enum:"true,false" description:"Only active (true) or inactive (false) products."`
	Category string `query:"category" description:"Only products in this category."`
}

func (s *Server) productRoutes() {
	const tag = "Product"
	s.add(route{
		method: http.MethodPost, path: "/product", id: "createProduct", tag: tag,
		summary: "Create a product", desc: "A product is what a package delivers; its VAT rate taxes its invoice lines.",
		request: new(ProductInput), responses: common(respCreated), handle: s.createProduct,
	})
	s.add(route{
		method: http.MethodGet, path: "/product", id: "listProducts", tag: tag,
		summary: "List products", request: new(productListParams),
		responses: common(respList(new([]catalog.Product))),
		handle:    s.listProducts,
	})
	s.add(route{
		method: http.MethodGet, path: "/product/{id}", id: "getProduct", tag: tag,
		summary: "Get a product", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(catalog.Product)}, respNotFound),
		handle:    apikit.GetOne(s.app.Product),
	})
	s.add(route{
		method: http.MethodPut, path: "/product/{id}", id: "updateProduct", tag: tag,
		summary: "Replace a product's fields",
		desc:    "Template packages see the change; subscription packages made earlier keep their copy.",
		request: new(productUpdate), responses: common(respNoContent, respNotFound), handle: s.updateProduct,
	})
	s.add(route{
		method: http.MethodDelete, path: "/product/{id}", id: "deleteProduct", tag: tag,
		summary: "Delete a product",
		desc:    "A product that a template package (archived or not) contains is not deleted: the answer is a 400 naming `id` and the packages. Set `active` to false to stop offering it.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deleteProduct,
	})
}

func (s *Server) createProduct(w http.ResponseWriter, r *http.Request) error {
	var in ProductInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	p, err := in.product()
	if err != nil {
		return err
	}
	p, err = s.app.CreateProduct(r.Context(), p)
	if err != nil {
		return err
	}
	s.created(w, "/product/"+p.ID, p.ID)
	return nil
}

func (s *Server) listProducts(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := catalogdb.ProductFilter{Category: strings.TrimSpace(q.Get("category")), Active: apikit.QueryBool(q, "active", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	ps, next, err := s.app.Products(r.Context(), f, p)
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []catalog.Product{}
	}
	s.writeList(w, r, ps, next)
	return nil
}

func (s *Server) updateProduct(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in ProductInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	p, err := in.product()
	if err != nil {
		return err
	}
	p.ID = id
	if _, err := s.app.UpdateProduct(r.Context(), p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteProduct(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteProduct(r.Context(), id); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// PrepareJSONSchema adds a complete example to the ProductInput schema.
func (ProductInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{"name": "Nordavis Digital", "description": "Every article, the e-paper and the archive", "category": "digital", "vatRate": 0, "active": true}`))
	return nil
}
