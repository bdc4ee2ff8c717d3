package site

import "strconv"

// seo fills a page's canonical address, its hreflang twins and its
// breadcrumb's JSON-LD (the product's was made with its page).
func (s *Site) seo(req *request, p *Page) {
	path := p.Path
	if path == "/" {
		path = ""
	}
	query := ""
	if d, ok := p.Data.(*CollectionData); ok && d.Pager.Page > 1 && p.Kind != "search" {
		query = "?page=" + strconv.Itoa(d.Pager.Page)
	}
	def, other := p.defLang, otherLanguage(p.defLang)
	defURL, otherURL := p.Root+path+query, p.Root+"/"+other+path+query
	if path == "" {
		defURL = p.Root + "/" + query
	}
	p.Canonical = defURL
	if p.Lang != def {
		p.Canonical = otherURL
	}
	p.Alternates = []Alternate{{def, defURL}, {other, otherURL}, {"x-default", defURL}}
	if p.Description == "" {
		p.Description = p.StoreName
	}
	if p.OGType == "" {
		p.OGType = "website"
	}
	if len(p.Breadcrumb) > 1 {
		items := make([]any, 0, len(p.Breadcrumb))
		for i, c := range p.Breadcrumb {
			items = append(items, map[string]any{"@type": "ListItem", "position": i + 1, "name": c.Name, "item": c.URL})
		}
		p.JSONLD = append(p.JSONLD, map[string]any{"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": items})
	}
}
