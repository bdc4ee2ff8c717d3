package pages

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

// The staff pages (decisions §16): the store's members, roles and pending
// invitations for its owner and admins, and the page a mailed invitation
// link opens. Like every store page they read on the server and change
// through the JSON API, so its rules hold for the page too.

// StaffPage serves GET /stores/{store_id}/staff: members, roles and
// pending invitations, which the owner and admins manage.
func (p *Pages) StaffPage() http.Handler {
	return p.handleStore("", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		user, store := mp.user, mp.store
		lang := mp.lang
		member := mp.member
		data := map[string]any{"Title": word(lang, "staff.title"), "Me": user.ID, "MyRole": roleLabel(lang, member.RoleName, member.BuiltIn),
			"MyScopes": scopeLabels(lang, member.Scopes, member.Everything())}
		if member.BuiltIn == "" {
			p.storePage(w, mp, "staff.html", "staff", data)
			return nil
		}
		staff, _, err := p.db.FindStaff(r.Context(), store.ID, storage.Page{Page: 1, Limit: 100})
		if err != nil {
			return err
		}
		roles, err := p.db.FindRoles(r.Context(), store.ID)
		if err != nil {
			return err
		}
		invitations, _, err := p.db.FindPendingInvitations(r.Context(), store.ID, storage.Page{Page: 1, Limit: 100})
		if err != nil {
			return err
		}
		type memberRow struct {
			UserID                        uuid.UUID
			Name, Email, Joined, LastSeen string
			RoleID                        uuid.UUID
			RoleName                      string
			Owner, Self                   bool
		}
		rows := make([]memberRow, 0, len(staff))
		for _, m := range staff {
			row := memberRow{UserID: m.UserID, Name: m.Name, Email: m.Email, Joined: utcTime(m.JoinedAt), LastSeen: word(lang, "staff.never"),
				RoleID: m.Role.ID, RoleName: roleLabel(lang, m.Role.Name, derefString(m.Role.BuiltIn)), Owner: m.Role.BuiltIn != nil && *m.Role.BuiltIn == storage.RoleOwner, Self: m.UserID == user.ID}
			if m.LastSeenAt != nil {
				row.LastSeen = utcTime(*m.LastSeenAt)
			}
			rows = append(rows, row)
		}
		type roleRow struct {
			ID             uuid.UUID
			Name, Scopes   string
			BuiltIn, Owner bool
			Members        int
		}
		roleRows := make([]roleRow, 0, len(roles))
		for _, ro := range roles {
			roleRows = append(roleRows, roleRow{ID: ro.ID, Name: roleLabel(lang, ro.Name, derefString(ro.BuiltIn)), BuiltIn: ro.BuiltIn != nil, Members: ro.MemberCount,
				Owner: ro.BuiltIn != nil && *ro.BuiltIn == storage.RoleOwner, Scopes: scopeLabels(lang, ro.Scopes, ro.BuiltIn != nil)})
		}
		type invitationRow struct {
			ID                     uuid.UUID
			Email, Role, ExpiresAt string
		}
		invRows := make([]invitationRow, 0, len(invitations))
		for _, inv := range invitations {
			invRows = append(invRows, invitationRow{ID: inv.ID, Email: inv.Email, Role: roleLabel(lang, inv.Role.Name, derefString(inv.Role.BuiltIn)), ExpiresAt: utcTime(inv.ExpiresAt)})
		}
		type domain struct{ Name, Label string }
		domains := make([]domain, 0, len(storage.ScopeDomains))
		for _, d := range storage.ScopeDomains {
			domains = append(domains, domain{d, word(lang, "scope."+d)})
		}
		data["Manage"], data["Members"], data["Roles"], data["Invitations"], data["Domains"] = true, rows, roleRows, invRows, domains
		p.storePage(w, mp, "staff.html", "staff", data)
		return nil
	})
}

// roleLabel is a role's name in the page's language: the built-in roles'
// names are the page's words, a custom role's its own.
func roleLabel(lang string, name string, builtIn string) string {
	if builtIn != "" {
		return word(lang, "staff.role_"+builtIn)
	}
	return name
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// scopeLabels says a role's scopes in the page's language.
func scopeLabels(lang string, scopes []string, everything bool) string {
	if everything {
		return word(lang, "staff.everything")
	}
	sep := ", "
	if lang == "ar" {
		sep = "، "
	}
	labels := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		labels = append(labels, scopeWords(lang, sc))
	}
	return strings.Join(labels, sep)
}

// InvitationPage serves GET /invitations: the page a mailed invitation
// opens. The token stays in the URL's fragment, which no server sees; the
// page's script reads it, looks the invitation up and accepts it through
// the JSON API.
func (p *Pages) InvitationPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		user, err := session.User(r, p.db, p.cfg.SecureCookies)
		if err != nil {
			return err
		}
		lang := p.pageLang(r, user)
		data := map[string]any{"Title": word(lang, "invitation.title"), "CSRF": p.sessionCSRF(r)}
		if user != nil {
			data["SignedInAs"] = user.Email
		}
		renderPage(w, http.StatusOK, lang, "staff_invitation.html", data)
		return nil
	})
}
