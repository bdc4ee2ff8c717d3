package storage

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// A uuid.UUID parameter is encoded from its bytes, in binary and in text
// and inside arrays; without encodeUUIDs pgx takes it through its
// driver.Valuer (a string it parses back).
func TestUUIDParametersSkipTheValuer(t *testing.T) {
	id := uuid.MustParse("01a21dc5-e5c2-7418-8554-ddd30d095ba0")
	plain := pgtype.NewMap()
	require.Equal(t, "*pgtype.encodePlanDriverValuer", fmt.Sprintf("%T", plain.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id)),
		"what pgx does by itself")

	m := pgtype.NewMap()
	encodeUUIDs(m)
	require.Equal(t, "*storage.uuidParamPlan", fmt.Sprintf("%T", m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id)))
	for _, tc := range []struct {
		name   string
		oid    uint32
		format int16
		value  any
		want   any
	}{
		{"binary", pgtype.UUIDOID, pgtype.BinaryFormatCode, id, id[:]},
		{"text", pgtype.UUIDOID, pgtype.TextFormatCode, id, []byte(id.String())},
		{"pointer", pgtype.UUIDOID, pgtype.BinaryFormatCode, &id, id[:]},
		{"nil pointer", pgtype.UUIDOID, pgtype.BinaryFormatCode, (*uuid.UUID)(nil), []byte(nil)},
		{"into text", pgtype.TextOID, pgtype.TextFormatCode, id, []byte(id.String())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.Encode(tc.oid, tc.format, tc.value, nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	array, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, []uuid.UUID{id, id}, nil)
	require.NoError(t, err)
	plainArray, err := plain.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, []uuid.UUID{id, id}, nil)
	require.NoError(t, err)
	require.Equal(t, plainArray, array, "the same bytes as through the Valuer")
}
