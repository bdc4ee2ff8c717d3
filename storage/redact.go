package storage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Redacted is err fit for a log line: a Postgres error in it keeps its
// SQLSTATE, constraint, table and column but not its message or detail,
// which can quote row data (`invalid input syntax for type uuid: "…"`,
// `Failing row contains (…)`). The rest of the chain's text is kept.
func Redacted(err error) error {
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) {
		return err
	}
	safe := fmt.Sprintf("postgres error SQLSTATE %s", pgErr.Code)
	for _, part := range [][2]string{{"constraint", pgErr.ConstraintName}, {"table", pgErr.TableName}, {"column", pgErr.ColumnName}} {
		if part[1] != "" {
			safe += fmt.Sprintf(" %s %s", part[0], part[1])
		}
	}
	return redactedError{text: strings.ReplaceAll(err.Error(), pgErr.Error(), safe), err: err}
}

// redactedError shows the redacted text and still unwraps to the original
// for errors.Is and errors.As.
type redactedError struct {
	text string
	err  error
}

func (e redactedError) Error() string { return e.text }
func (e redactedError) Unwrap() error { return e.err }
