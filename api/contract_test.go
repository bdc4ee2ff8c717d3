package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// contract is the served OpenAPI document as a router that finds the
// operation of a request.
var contract = sync.OnceValues(func() (routers.Router, error) {
	raw, err := api.OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	// Routes are matched on the path alone: the tests' server has its own address.
	doc.Servers = nil
	// Pages, CSV, images and XML (an invoice's UBL) are checked for their status and content type;
	// their bodies are not JSON.
	for _, contentType := range []string{"text/html", "text/csv", "image/webp", "image/jpeg", "image/png", "application/xml"} {
		openapi3filter.RegisterBodyDecoder(contentType, openapi3filter.FileBodyDecoder)
	}
	return gorillamux.NewRouter(doc)
})

// checkContract checks one exchange against the document: the response's
// status must be documented for the operation and its body must match the
// schema; a request the server accepted (2xx) must match the document too,
// so the document is never stricter than the server. Requests to paths the
// document does not describe (a 404 test, the media proxy) are not checked.
func checkContract(req *http.Request, reqBody []byte, checkRequest bool, resp *http.Response, respBody []byte) error {
	if os.Getenv("SVC_TEST_CONTRACT") == "off" {
		return nil
	}
	router, err := contract()
	if err != nil {
		return fmt.Errorf("load the OpenAPI document: %w", err)
	}
	target := req.Clone(context.Background())
	target.URL = &url.URL{Path: req.URL.Path, RawQuery: req.URL.RawQuery}
	target.Host = ""
	route, params, err := router.FindRoute(target)
	if err != nil {
		return nil
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: target, PathParams: params, Route: route, Options: opts}
	var problems []error
	if checkRequest && resp.StatusCode/100 == 2 {
		target.Body = io.NopCloser(bytes.NewReader(reqBody))
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			problems = append(problems, fmt.Errorf("contract: %s %s was accepted (%d) but the document refuses it: %w",
				req.Method, req.URL.Path, resp.StatusCode, err))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(respBody)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		problems = append(problems, fmt.Errorf("contract: %s %s answered %d, which the document does not describe: %s\n%s",
			req.Method, req.URL.Path, resp.StatusCode, strings.ReplaceAll(err.Error(), "\n", " | "), truncate(respBody, 400)))
	} else if missing := missingFields(route.Operation, resp, respBody); len(missing) > 0 {
		problems = append(problems, fmt.Errorf("contract: %s %s answered %d without documented fields %v (an absent value is null, never a missing key)\n%s",
			req.Method, req.URL.Path, resp.StatusCode, missing, truncate(respBody, 400)))
	}
	return errors.Join(problems...)
}

// missingFields lists the documented fields a JSON answer leaves out. A
// schema's required list says which fields it promises; a schema with none
// promises every property it names (inline objects mostly say nothing).
func missingFields(op *openapi3.Operation, resp *http.Response, body []byte) []string {
	ref := op.Responses.Status(resp.StatusCode)
	if ref == nil || ref.Value == nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	media := ref.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return nil
	}
	var value any
	if json.Unmarshal(body, &value) != nil {
		return nil
	}
	var missing []string
	var walk func(path string, s *openapi3.Schema, v any)
	walk = func(path string, s *openapi3.Schema, v any) {
		if s == nil {
			return
		}
		for _, part := range s.AllOf {
			walk(path, part.Value, v)
		}
		switch v := v.(type) {
		case map[string]any:
			promised := s.Required
			if len(promised) == 0 {
				for name := range s.Properties {
					promised = append(promised, name)
				}
			}
			for _, name := range promised {
				if _, ok := v[name]; !ok {
					missing = append(missing, path+"/"+name)
				}
			}
			for name, prop := range s.Properties {
				if child, ok := v[name]; ok {
					walk(path+"/"+name, prop.Value, child)
				}
			}
		case []any:
			if s.Items != nil {
				for _, item := range v {
					walk(path+"/*", s.Items.Value, item)
				}
			}
		}
	}
	walk("", media.Schema.Value, value)
	slices.Sort(missing)
	return slices.Compact(missing)
}

// The contract check refuses what the document does not describe: an
// undocumented status, and a body of the wrong shape.
func TestContractCheckRefusesUndocumentedAnswers(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/stores/"+uuid.NewString()+"/orders?page=1", nil)
	answer := func(status int, body string) error {
		resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}}
		return checkContract(req, nil, true, resp, []byte(body))
	}
	page := `{"success":true,"data":{"items":[],"pagination":{"page":1,"limit":20,"total":0,"total_pages":0,"has_next":false}}}`
	require.NoError(t, answer(http.StatusOK, page))
	require.ErrorContains(t, answer(http.StatusTeapot, page), "does not describe")
	require.ErrorContains(t, answer(http.StatusOK, `{"success":true,"data":{"items":"none","pagination":{}}}`), "does not describe")

	// An inline object with no required list still promises every field it names.
	ping := httptest.NewRequest(http.MethodPost, "/api/v1/stores/"+uuid.NewString()+"/webhooks/"+uuid.NewString()+"/test", nil)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}}
	whole := `{"success":true,"data":{"delivery_id":"` + uuid.NewString() + `","status_code":200,"response_body":"ok","duration_ms":3,"error":null}}`
	require.NoError(t, checkContract(ping, nil, true, resp, []byte(whole)))
	withoutError := `{"success":true,"data":{"delivery_id":"` + uuid.NewString() + `","status_code":200,"response_body":"ok","duration_ms":3}}`
	require.ErrorContains(t, checkContract(ping, nil, true, resp, []byte(withoutError)), "without documented fields [/data/error]")
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
