package pages

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// signParams is the signature of decisions §8: lowercase hex HMAC-SHA256,
// keyed with the app's client secret, over every parameter but hmac itself,
// URL-decoded, sorted by name, as name=value joined by &.
func signParams(secret string, params url.Values) string {
	names := make([]string, 0, len(params))
	for name := range params {
		if name != "hmac" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	pairs := make([]string, 0, len(names))
	for _, name := range names {
		pairs = append(pairs, name+"="+params.Get(name))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join(pairs, "&")))
	return hex.EncodeToString(mac.Sum(nil))
}

// withSignature adds timestamp and hmac to params and appends them to base
// (which has no query string of its own).
func withSignature(base, secret string, params url.Values, timestamp int64) string {
	params.Set("timestamp", strconv.FormatInt(timestamp, 10))
	params.Set("hmac", signParams(secret, params))
	return base + "?" + params.Encode()
}
