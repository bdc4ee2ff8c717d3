package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIDocument returns the OpenAPI 3.1 document as JSON.
var OpenAPIDocument = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

// handleOpenAPI serves GET /openapi.json.
func (s *Server) handleOpenAPI() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		doc, err := OpenAPIDocument()
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
		return nil
	}
}
