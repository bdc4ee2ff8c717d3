package orderemail

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The subject is fixed text in the store's language: a store name is typed
// by whoever signs up, so it goes in the body only, where it reads as the
// store's name and not as the mail's message (a subject "Claim your prize
// at evil.example" would make the invitation a relay for it).
func TestInvitationSubjectIsFixedText(t *testing.T) {
	name := "Claim your prize at evil.example"
	for language, subject := range map[string]string{"ar": "دعوة للانضمام إلى فريق المتجر", "en": "You are invited to join the store's staff"} {
		mail, err := RenderInvitation(name, language, "clerk@example.com", "Admin", "https://merchant.example/invitations#t")
		require.NoError(t, err)
		require.Equal(t, subject, mail.Subject, language)
		require.Contains(t, mail.HTML, name, "the store name stays in the body")
	}
}
