package api

import (
	"encoding/json"
	"net/http"
)

type envelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// listData is the paginated list of decisions §1.
type listData[T any] struct {
	Items      []T        `json:"items"`
	Pagination pagination `json:"pagination"`
}

type pagination struct {
	Page       int  `json:"page"`
	Limit      int  `json:"limit"`
	Total      int  `json:"total"`
	TotalPages int  `json:"total_pages"`
	HasNext    bool `json:"has_next"`
}

// views is the answer of each record, in order: a list handler's items
// (never nil, so an empty list encodes as []).
func views[S, T any](records []S, view func(S) T) []T {
	out := make([]T, 0, len(records))
	for _, r := range records {
		out = append(out, view(r))
	}
	return out
}

func newList[T any](items []T, page, limit, total int) listData[T] {
	if items == nil {
		items = []T{}
	}
	pages := (total + limit - 1) / limit
	return listData[T]{Items: items, Pagination: pagination{
		Page: page, Limit: limit, Total: total, TotalPages: pages, HasNext: page < pages,
	}}
}

// encode writes v as JSON with the status.
func encode(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// respond writes the success envelope.
func respond(w http.ResponseWriter, status int, data any) {
	encode(w, status, envelope{Success: true, Data: data})
}
