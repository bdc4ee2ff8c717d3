package orderemail

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The gateway change mail's subject is fixed text in the store's language,
// Arabic for any language it does not know; the store name and whatever the
// member typed stay in the body, escaped.
func TestGatewayChangeMail(t *testing.T) {
	c := GatewayChange{To: "owner@example.com", OwnerName: "Owner", StoreName: "Claim your prize at evil.example", Provider: "stripe",
		Kind: "replaced", AccountHint: "…9876", PreviousHint: "…4242", ActorName: `<script>alert(1)</script>`, ActorEmail: "admin@example.com",
		IP: "203.0.113.7", UserAgent: "Mozilla/5.0", RequestID: "req-1", At: time.Date(2026, 11, 28, 7, 30, 0, 0, time.FixedZone("EET", 7200))}
	for language, subject := range map[string]string{"ar": "تغيّرت مفاتيح بوابة الدفع في متجرك", "fr": "تغيّرت مفاتيح بوابة الدفع في متجرك",
		"en": "Your store's payment gateway keys changed"} {
		c.Language = language
		mail, err := RenderGatewayChange(c)
		require.NoError(t, err)
		require.Equal(t, subject, mail.Subject, language)
		require.Equal(t, "owner@example.com", mail.To)
		for _, want := range []string{c.StoreName, "…9876", "…4242", "203.0.113.7", "Mozilla/5.0", "req-1", "2026-11-28 05:30:00 UTC", "Stripe",
			"&lt;script&gt;"} {
			require.Contains(t, mail.HTML, want, language)
		}
		require.NotContains(t, mail.HTML, "<script>")
	}
	c.Kind = "rotated"
	_, err := RenderGatewayChange(c)
	require.Error(t, err, "an unknown change is no mail")
}
