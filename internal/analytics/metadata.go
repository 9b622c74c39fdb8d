package analytics

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
)

// Namespace of the entity types in $metadata.
const Namespace = "Kadens.Analytics"

// Metadata renders the CSDL XML document of model m.
func Metadata(m *Model) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">` + "\n")
	b.WriteString(`<edmx:DataServices>` + "\n")
	b.WriteString(`<Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="` + Namespace + `">` + "\n")
	esc := func(s string) string {
		var out bytes.Buffer
		_ = xml.EscapeText(&out, []byte(s))
		return out.String()
	}
	written := map[string]bool{}
	for _, s := range m.Sets {
		if written[s.Type] {
			continue // sets of one entity type (Subscriptions, CanceledSubscriptions)
		}
		written[s.Type] = true
		b.WriteString(`<EntityType Name="` + esc(s.Type) + `">`)
		b.WriteString(`<Key><PropertyRef Name="` + esc(s.Key) + `"/></Key>`)
		for _, p := range s.Props {
			b.WriteString(`<Property Name="` + esc(p.Name) + `" Type="` + p.Type.name() + `"`)
			if !p.Nullable && p.Name != s.Key {
				b.WriteString(` Nullable="false"`)
			} else if p.Name == s.Key {
				b.WriteString(` Nullable="false"`)
			}
			if p.Type == Money {
				b.WriteString(` Scale="variable"`)
			}
			b.WriteString(`/>`)
		}
		for _, n := range s.Navs {
			t, _ := m.Set(n.Target)
			typ := Namespace + "." + t.Type
			if n.Many {
				typ = "Collection(" + typ + ")"
			}
			b.WriteString(`<NavigationProperty Name="` + esc(n.Name) + `" Type="` + esc(typ) + `" Partner="` + esc(n.Partner) + `"/>`)
		}
		b.WriteString("</EntityType>\n")
	}
	b.WriteString(`<EntityContainer Name="Container">` + "\n")
	for _, s := range m.Sets {
		b.WriteString(`<EntitySet Name="` + esc(s.Name) + `" EntityType="` + Namespace + "." + esc(s.Type) + `">`)
		for _, n := range s.Navs {
			b.WriteString(`<NavigationPropertyBinding Path="` + esc(n.Name) + `" Target="` + esc(n.Target) + `"/>`)
		}
		b.WriteString("</EntitySet>\n")
	}
	b.WriteString("</EntityContainer>\n</Schema>\n</edmx:DataServices>\n</edmx:Edmx>\n")
	return b.Bytes()
}

// serviceDocument lists the entity sets.
func serviceDocument(m *Model, url string) []byte {
	type item struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
		URL  string `json:"url"`
	}
	doc := struct {
		Context string `json:"@odata.context"`
		Value   []item `json:"value"`
	}{Context: url + "/$metadata"}
	for _, s := range m.Sets {
		doc.Value = append(doc.Value, item{s.Name, "EntitySet", s.Name})
	}
	b, _ := json.Marshal(doc)
	return b
}
