package api

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
)

// decoders decode and check every JSON request body the API reads.
var decoders = map[string]func(*http.Request) error{
	"bulkStatus":         func(r *http.Request) error { _, err := decode[bulkStatusRequest](r); return err },
	"cart":               func(r *http.Request) error { _, err := decode[cartRequest](r); return err },
	"checkout":           func(r *http.Request) error { _, err := decode[checkoutRequest](r); return err },
	"comment":            func(r *http.Request) error { _, err := decode[commentRequest](r); return err },
	"createCategory":     func(r *http.Request) error { _, err := decode[createCategoryRequest](r); return err },
	"createCustomer":     func(r *http.Request) error { _, err := decode[createCustomerRequest](r); return err },
	"createOrder":        func(r *http.Request) error { _, err := decode[createOrderRequest](r); return err },
	"createProduct":      func(r *http.Request) error { _, err := decode[createProductRequest](r); return err },
	"createSubscription": func(r *http.Request) error { _, err := decode[createSubscriptionRequest](r); return err },
	"createToken":        func(r *http.Request) error { _, err := decode[createTokenRequest](r); return err },
	"createVariant":      func(r *http.Request) error { _, err := decode[createVariantRequest](r); return err },
	"deleteImage":        func(r *http.Request) error { _, err := decode[deleteImageRequest](r); return err },
	"login":              func(r *http.Request) error { _, err := decode[loginRequest](r); return err },
	"manifest":           func(r *http.Request) error { _, err := decode[manifestRequest](r); return err },
	"markRecovered":      func(r *http.Request) error { _, err := decode[markRecoveredRequest](r); return err },
	"partialAcceptance":  func(r *http.Request) error { _, err := decode[partialAcceptanceRequest](r); return err },
	"publish":            func(r *http.Request) error { _, err := decode[publishRequest](r); return err },
	"reason":             func(r *http.Request) error { _, err := decode[reasonRequest](r); return err },
	"recover":            func(r *http.Request) error { _, err := decode[recoverRequest](r); return err },
	"resolve":            func(r *http.Request) error { _, err := decode[resolveRequest](r); return err },
	"revoke":             func(r *http.Request) error { _, err := decode[revokeRequest](r); return err },
	"setAlt":             func(r *http.Request) error { _, err := decode[setAltRequest](r); return err },
	"signup":             func(r *http.Request) error { _, err := decode[signupRequest](r); return err },
	"token":              func(r *http.Request) error { _, err := decode[tokenRequest](r); return err },
	"updateCategory":     func(r *http.Request) error { _, err := decode[updateCategoryRequest](r); return err },
	"updateCustomer":     func(r *http.Request) error { _, err := decode[updateCustomerRequest](r); return err },
	"updateOrder":        func(r *http.Request) error { _, err := decode[updateOrderRequest](r); return err },
	"updateProduct":      func(r *http.Request) error { _, err := decode[updateProductRequest](r); return err },
	"updateSettings":     func(r *http.Request) error { _, err := decode[updateSettingsRequest](r); return err },
	"updateStatus":       func(r *http.Request) error { _, err := decode[updateStatusRequest](r); return err },
	"updateSubscription": func(r *http.Request) error { _, err := decode[updateSubscriptionRequest](r); return err },
	"updateVariant":      func(r *http.Request) error { _, err := decode[updateVariantRequest](r); return err },
}

// Any body, for every request type, decodes and checks without panicking
// and is refused, if at all, with a 4xx.
func FuzzDecodeRequests(f *testing.F) {
	for _, seed := range []string{`{}`, `{"lines":[{"variant_id":"x","quantity":-1}]}`, `{"price":1e400}`, `{"name":null}`,
		`{"email":"a@b.c","password":"0123456789","name":"n","store":{"name":"s","subdomain":"ab-c","currency":"EGP","default_language":"ar"}}`,
		`{"status":"SHIPPED","tracking_number":"\u0000"}`, `[1,2]`, `{"a":`, `{"scopes":["orders:read"],"name":"x","expires_in_days":366}`,
		`{"lines":[{"variant_id":"01a20bbc-987d-71e4-a754-2bc7b31e11d4","quantity":9223372036854775807}],"shipping_fee":-1}`} {
		f.Add([]byte(seed), "application/json")
	}
	f.Add([]byte(`{}`), "text/plain")
	f.Add([]byte(``), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		for name, decodeBody := range decoders {
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			if contentType != "" {
				r.Header.Set("Content-Type", contentType)
			}
			if err := decodeBody(r); err != nil {
				if e := toAPIError(err); e.Status >= 500 {
					t.Fatalf("%s: %q answered %d: %v", name, body, e.Status, err)
				}
			}
		}
	})
}

// Any multipart body is read, fingerprinted or refused with a 4xx, never a
// panic or a 5xx.
func FuzzReadUpload(f *testing.F) {
	var valid bytes.Buffer
	mw := multipart.NewWriter(&valid)
	_ = mw.WriteField("amount", "1000")
	part, _ := mw.CreateFormFile("file", "receipt.jpg")
	_, _ = part.Write([]byte("\xff\xd8\xff\xe0 not really a jpeg"))
	_ = mw.Close()
	f.Add(valid.Bytes(), mw.Boundary())
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n\r\n--b--\r\n"), "b")
	f.Add([]byte("--b\r\n\r\n--b--"), "b")
	f.Add([]byte(""), "")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		requestFingerprint(r, body)
		if _, err := readUpload(r); err != nil {
			if e := toAPIError(err); e.Status >= 500 {
				t.Fatalf("%q answered %d: %v", body, e.Status, err)
			}
		}
	})
}
