package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
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
	// Pages, CSV and images are checked for their status and content type;
	// their bodies are not JSON.
	for _, contentType := range []string{"text/html", "text/csv", "image/webp", "image/jpeg", "image/png"} {
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
	}
	return errors.Join(problems...)
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
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
