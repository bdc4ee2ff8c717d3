package activities

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The development chat provider logs what it would send, never the
// customer's phone number or name.
func TestLogChatProviderKeepsContactsOutOfTheLog(t *testing.T) {
	var logged string
	p := LogChatProvider{Log: func(msg string, args ...any) { logged = fmt.Sprint(append([]any{msg}, args...)...) }}
	_, err := p.SendTemplate(context.Background(), ChatMessage{To: "+201001234567", Template: "order_confirmation", Language: "ar",
		Params: []string{"Mona Adel", "ORD-1001"}, Reference: "order-1"})
	require.NoError(t, err)
	require.Contains(t, logged, "order_confirmation")
	require.NotContains(t, logged, "1001234567")
	require.NotContains(t, logged, "Mona")
}
