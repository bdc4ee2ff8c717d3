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

var staffWords = map[string]map[string]string{
	"ar": {
		"title": "الفريق والأدوار", "members": "أعضاء الفريق", "name": "الاسم", "email": "البريد الإلكتروني", "role": "الدور",
		"joined": "انضم", "last_seen": "آخر ظهور", "never": "لم يظهر بعد", "change": "تغيير الدور", "remove": "إزالة",
		"invite": "دعوة عضو", "send_invite": "إرسال الدعوة", "invitations": "الدعوات المعلّقة", "no_invitations": "لا توجد دعوات معلّقة.",
		"expires": "تنتهي", "resend": "إعادة الإرسال", "revoke": "إلغاء", "roles": "الأدوار", "scopes": "الصلاحيات",
		"members_count": "الأعضاء", "built_in": "دور أساسي", "new_role": "دور جديد", "role_name": "اسم الدور", "create_role": "إنشاء الدور",
		"delete": "حذف", "everything": "كل الصلاحيات", "owner_only": "يدير الفريق والأدوار مالك المتجر والمسؤولون فقط.",
		"your_role": "دورك في هذا المتجر", "done": "تم", "confirm_remove": "إزالة هذا العضو من المتجر؟",
		"read": "عرض", "write": "تعديل", "role_owner": "المالك", "role_admin": "مسؤول",
	},
	"en": {
		"title": "Staff and roles", "members": "Members", "name": "Name", "email": "Email", "role": "Role",
		"joined": "Joined", "last_seen": "Last seen", "never": "not yet", "change": "Change role", "remove": "Remove",
		"invite": "Invite a member", "send_invite": "Send the invitation", "invitations": "Pending invitations", "no_invitations": "No pending invitations.",
		"expires": "Expires", "resend": "Resend", "revoke": "Revoke", "roles": "Roles", "scopes": "Scopes",
		"members_count": "Members", "built_in": "built in", "new_role": "New role", "role_name": "Role name", "create_role": "Create the role",
		"delete": "Delete", "everything": "every scope", "owner_only": "Only the store's owner and admins manage staff and roles.",
		"your_role": "Your role in this store", "done": "Done", "confirm_remove": "Remove this member from the store?",
		"read": "view", "write": "change", "role_owner": "Owner", "role_admin": "Admin",
	},
}

var invitationWords = map[string]map[string]string{
	"ar": {
		"title": "دعوة للانضمام إلى متجر", "loading": "جارٍ التحقق من الدعوة…", "intro": "دُعيت للانضمام إلى", "as": "بدور",
		"name": "اسمك", "password": "كلمة المرور (10 أحرف على الأقل)", "accept": "قبول الدعوة", "signin_first": "لديك حساب بهذا البريد؛ سجّل الدخول ثم عد إلى هذه الصفحة لقبول الدعوة.",
		"signin": "تسجيل الدخول", "accepted": "انضممت إلى المتجر.", "open_store": "فتح المتجر", "no_token": "الرابط لا يحمل دعوة؛ افتح الرابط كما وصلك في البريد.",
		"other_lang": "English",
	},
	"en": {
		"title": "An invitation to join a store", "loading": "Checking the invitation…", "intro": "You are invited to join", "as": "as",
		"name": "Your name", "password": "Password (at least 10 characters)", "accept": "Accept the invitation", "signin_first": "You have an account with this email: sign in, then come back to this page to accept.",
		"signin": "Sign in", "accepted": "You joined the store.", "open_store": "Open the store", "no_token": "This link carries no invitation; open the link exactly as the email gave it.",
		"other_lang": "العربية",
	},
}

// StaffPage serves GET /stores/{store_id}/staff: members, roles and
// pending invitations, which the owner and admins manage.
func (p *Pages) StaffPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.storeMember(w, r)
		if err != nil {
			return err
		}
		user, store := mp.user, mp.store
		lang := mp.lang
		member := mp.member
		words := staffWords[lang]
		data := map[string]any{"Title": words["title"], "S": words, "Me": user.ID, "MyRole": roleLabel(lang, member.RoleName, member.BuiltIn),
			"MyScopes": scopeLabels(lang, member.Scopes, member.Everything())}
		if member.BuiltIn == "" {
			p.storePage(w, mp, "staff.html", lang, "staff", data)
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
			row := memberRow{UserID: m.UserID, Name: m.Name, Email: m.Email, Joined: utcTime(m.JoinedAt), LastSeen: words["never"],
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
			domains = append(domains, domain{d, pageWords[lang][d]})
		}
		data["Manage"], data["Members"], data["Roles"], data["Invitations"], data["Domains"] = true, rows, roleRows, invRows, domains
		p.storePage(w, mp, "staff.html", lang, "staff", data)
		return nil
	})
}

// roleLabel is a role's name in the page's language: the built-in roles'
// names are the page's words, a custom role's its own.
func roleLabel(lang string, name string, builtIn string) string {
	if builtIn != "" {
		return staffWords[lang]["role_"+builtIn]
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
		return staffWords[lang]["everything"]
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
		user, err := session.User(r, p.db)
		if err != nil {
			return err
		}
		lang := p.pageLang(r, user)
		data := map[string]any{"T": pageWords[lang], "I": invitationWords[lang], "Title": invitationWords[lang]["title"], "Lang": lang,
			"OtherLang": map[string]string{"ar": "en", "en": "ar"}[lang]}
		if user != nil {
			data["SignedInAs"] = user.Email
		}
		renderPage(w, http.StatusOK, "staff_invitation.html", data)
		return nil
	})
}
