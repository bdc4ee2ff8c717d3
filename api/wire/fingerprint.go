package wire

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
)

// Fingerprint is what makes two requests with one Idempotency-Key the
// same request: method, path, query, and the body. A multipart body counts by
// its parts (name, file name, type, and a SHA-256 of the content), not its
// bytes, because clients pick a new random boundary for every send.
func Fingerprint(r *http.Request, body []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", r.Method, r.URL.Path, r.URL.RawQuery)
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mediaType == "multipart/form-data" && params["boundary"] != "" {
		parts := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		fmt.Fprintf(h, "%s\n", mediaType)
		for {
			part, err := parts.NextPart()
			if err != nil {
				if err != io.EOF {
					break // malformed: the handler refuses it; fall back to the raw bytes below
				}
				return h.Sum(nil)
			}
			content := sha256.New()
			_, copyErr := io.Copy(content, part)
			if copyErr != nil {
				break
			}
			fmt.Fprintf(h, "%q %q %q %x\n", part.FormName(), part.FileName(), part.Header.Get("Content-Type"), content.Sum(nil))
		}
	}
	fmt.Fprintf(h, "%s\n", r.Header.Get("Content-Type"))
	h.Write(body)
	return h.Sum(nil)
}
