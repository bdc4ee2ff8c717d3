// Package request holds the JSON bodies the API reads, one type per
// request, each with the Valid checks wire.Decode runs, and the Checker they
// share. The handlers beside their routes in api use them; they live here,
// not beside those handlers as the house style would have them, so that
// FuzzDecodeRequests decodes every one of them in a test binary that links
// this package, wire and storage's records, not the whole server (issue 47 §5).
package request
