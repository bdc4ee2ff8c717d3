package storage

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// pgx knows github.com/google/uuid's UUID only as a driver.Valuer: it asks
// it for its text, then parses that text back into Postgres's 16-byte uuid
// for every parameter (4% of the server's CPU under the load mix, where
// every statement names a store and most name rows by id). encodeUUIDs
// hands pgx the bytes instead, through its own uuid codec. Scanning is
// left as it was.

// uuidParam is a UUID as pgx's uuid codec takes it.
type uuidParam uuid.UUID

// UUIDValue implements pgtype.UUIDValuer.
func (u uuidParam) UUIDValue() (pgtype.UUID, error) { return pgtype.UUID{Bytes: u, Valid: true}, nil }

// encodeUUIDs makes m encode uuid.UUID parameters as uuidParam. A
// parameter of another type (text) still goes through the Valuer.
func encodeUUIDs(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{wrapUUIDParam}, m.TryWrapEncodePlanFuncs...)
}

func wrapUUIDParam(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if u, ok := value.(uuid.UUID); ok {
		return &uuidParamPlan{}, uuidParam(u), true
	}
	return nil, nil, false
}

type uuidParamPlan struct{ next pgtype.EncodePlan }

func (p *uuidParamPlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidParamPlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(uuidParam(value.(uuid.UUID)), buf)
}
