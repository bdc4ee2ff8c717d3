package wire

import (
	"errors"
	"io"
	"mime"
	"net/http"
)

// maxUploadBytes is the limit of an image or CSV file (spec §8: 5 MB).
const maxUploadBytes = 5 << 20

// Upload is a multipart request's file, the name the client gave it, and
// its small form fields.
type Upload struct {
	File     []byte
	Filename string
	Fields   map[string]string
}

var errNotMultipart = newError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
	"Send multipart/form-data with the file in its named field (`file`, or `receipt` for a recorded payment)",
	"أرسل الطلب بصيغة multipart/form-data والملف في حقله (file، أو receipt للدفعة المسجّلة)")

var errFileTooLarge = newError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
	"The file is larger than 5 MB", "حجم الملف أكبر من 5 ميجابايت")

// ReadUpload reads the multipart field `file` (at most 5 MB) and any other
// small fields, refusing anything else with a clear status.
func ReadUpload(r *http.Request) (Upload, error) { return ReadUploadField(r, "file") }

// ReadUploadField is ReadUpload with the file in the named field.
func ReadUploadField(r *http.Request, fileField string) (Upload, error) {
	return ReadUploadLimit(r, fileField, maxUploadBytes, errFileTooLarge)
}

// ReadUploadLimit is ReadUploadField with the file's limit in bytes and the
// refusal of a larger one (the media library takes PDFs of 10 MB).
func ReadUploadLimit(r *http.Request, fileField string, maxUploadBytes int, errFileTooLarge error) (Upload, error) {
	tooLargeOr := func(err error, otherwise error) error {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errFileTooLarge
		}
		return otherwise
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/form-data" {
		return Upload{}, errNotMultipart
	}
	r.Body = http.MaxBytesReader(nil, r.Body, int64(maxUploadBytes)+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return Upload{}, errNotMultipart
	}
	out := Upload{Fields: map[string]string{}}
	found := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Upload{}, tooLargeOr(err, errNotMultipart)
		}
		if part.FormName() == fileField {
			data, err := io.ReadAll(io.LimitReader(part, int64(maxUploadBytes)+1))
			if err != nil {
				return Upload{}, tooLargeOr(err, errNotMultipart)
			}
			if len(data) > maxUploadBytes {
				return Upload{}, errFileTooLarge
			}
			out.File, out.Filename, found = data, part.FileName(), true
			continue
		}
		value, err := io.ReadAll(io.LimitReader(part, 1024))
		if err != nil {
			return Upload{}, tooLargeOr(err, errNotMultipart)
		}
		out.Fields[part.FormName()] = string(value)
	}
	if !found || len(out.File) == 0 {
		return Upload{}, validationError([]FieldError{{Field: fileField, Code: "required", Message: "a non-empty file is required",
			MessageAr: ArabicFieldMessage("required")}})
	}
	return out, nil
}
