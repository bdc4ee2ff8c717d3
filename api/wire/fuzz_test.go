package wire

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
)

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
		Fingerprint(r, body)
		if _, err := ReadUpload(r); err != nil {
			var refused *Error
			if !errors.As(err, &refused) || refused.Status >= 500 {
				t.Fatalf("%q refused with %v, not a 4xx", body, err)
			}
		}
	})
}
