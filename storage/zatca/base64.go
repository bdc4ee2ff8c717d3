package zatca

import (
	"encoding/base64"
	"strings"
)

// decodeBase64 reads standard base64 with or without padding, spaces and
// line breaks ignored.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}
