package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

// Staff, roles and invitations (decisions §16): session only; roles are
// read by any member, everything else is the owner's and the admins'.

var (
	errRoleNotAllowed = newError(http.StatusForbidden, "ROLE_NOT_ALLOWED",
		"Your role does not allow this; ask the store's owner or an admin", "دورك لا يسمح بهذا؛ اطلب ذلك من مالك المتجر أو مسؤول")
	errDuplicateRoleName = newError(http.StatusConflict, "DUPLICATE_ROLE_NAME",
		"The store already has a role with this name", "يوجد في المتجر دور بهذا الاسم")
	errRoleBuiltIn = newError(http.StatusConflict, "ROLE_BUILT_IN",
		"The owner and admin roles cannot be changed or deleted", "لا يمكن تعديل دوري المالك والمسؤول أو حذفهما")
	errOwnerImmutable = newError(http.StatusConflict, "OWNER_IMMUTABLE",
		"The owner's membership cannot be changed or removed", "لا يمكن تغيير عضوية المالك أو إزالتها")
	errAlreadyMember = newError(http.StatusConflict, "ALREADY_MEMBER",
		"This email already belongs to a member of the store", "هذا البريد لعضو في المتجر بالفعل")
	errInvitationPending = newError(http.StatusConflict, "INVITATION_PENDING",
		"An invitation to this email is pending; resend it instead", "توجد دعوة معلّقة لهذا البريد؛ أعد إرسالها بدلًا من ذلك")
	errInvitationExpired = newError(http.StatusGone, "INVITATION_EXPIRED",
		"This invitation has expired; ask for a new one", "انتهت صلاحية هذه الدعوة؛ اطلب دعوة جديدة")
	errInvitationEmailMismatch = newError(http.StatusConflict, "INVITATION_EMAIL_MISMATCH",
		"You are signed in with another email than the invitation's", "أنت مسجّل الدخول ببريد غير بريد الدعوة")
	errInvitationLimit = newError(http.StatusConflict, "INVITATION_LIMIT_REACHED",
		fmt.Sprintf("The store has %d pending invitations; revoke one or wait for them to be accepted", storage.MaxPendingInvitations),
		fmt.Sprintf("لدى المتجر %d دعوة معلّقة؛ ألغِ إحداها أو انتظر قبولها", storage.MaxPendingInvitations))
	errInvitationMailLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
		"Too many invitations sent from this store or by you in the last hour; try again later",
		"دعوات كثيرة أُرسلت من هذا المتجر أو منك خلال الساعة الأخيرة؛ حاول لاحقًا")
	errInvitationSignIn = newError(http.StatusUnauthorized, "UNAUTHENTICATED",
		"An account with this email exists: sign in as it to accept", "يوجد حساب بهذا البريد: سجّل الدخول به لقبول الدعوة")
)

func staffErrors(err error) *apiError {
	var inUse *storage.RoleInUseError
	switch {
	case errors.As(err, &inUse):
		count := inUse.MemberCount
		return &apiError{Status: http.StatusConflict, Code: "ROLE_IN_USE", Message: fmt.Sprintf("%d members hold this role; give them another first", count),
			MessageAr: fmt.Sprintf("يحمل %d من الأعضاء هذا الدور؛ امنحهم دورًا آخر أولًا", count), MemberCount: &count}
	case errors.Is(err, storage.ErrDuplicateRoleName):
		return errDuplicateRoleName
	case errors.Is(err, storage.ErrRoleBuiltIn):
		return errRoleBuiltIn
	case errors.Is(err, storage.ErrOwnerImmutable):
		return errOwnerImmutable
	case errors.Is(err, storage.ErrRoleNotAllowed):
		return errRoleNotAllowed
	case errors.Is(err, storage.ErrAlreadyMember):
		return errAlreadyMember
	case errors.Is(err, storage.ErrInvitationPending):
		return errInvitationPending
	case errors.Is(err, storage.ErrInvitationExpired):
		return errInvitationExpired
	case errors.Is(err, storage.ErrInvitationLimit):
		return errInvitationLimit
	case errors.Is(err, storage.ErrLinkInvalid):
		return errLinkInvalid
	case errors.Is(err, storage.ErrLinkExpired):
		return errLinkExpired
	}
	return nil
}

type roleResponse struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	Scopes      []string  `json:"scopes"`
	BuiltIn     *string   `json:"built_in"`
	MemberCount int       `json:"member_count"`
}

// newRoleResponse shows a built-in role with every scope it holds.
func newRoleResponse(r storage.Role) roleResponse {
	return roleResponse{ID: r.ID, Name: r.Name, Scopes: roleScopes(r.BuiltIn != nil, r.Scopes), BuiltIn: r.BuiltIn, MemberCount: r.MemberCount}
}

// roleScopes are the scopes a role holds: all 18 for owner and admin.
func roleScopes(builtIn bool, scopes []string) []string {
	if builtIn {
		return request.AllScopes
	}
	if scopes == nil {
		return []string{}
	}
	return scopes
}

// normalScopes drops repeats and keeps the 18 scopes' order.
func normalScopes(scopes []string) []string {
	out := []string{}
	for _, s := range request.AllScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// handleListRoles serves GET /stores/{store_id}/roles (any member).
func (s *Server) handleListRoles() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		roles, err := s.db.FindRoles(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		out := make([]roleResponse, 0, len(roles))
		for _, role := range roles {
			out = append(out, newRoleResponse(role))
		}
		respond(w, http.StatusOK, out)
		return nil
	}
}

// handleCreateRole serves POST /stores/{store_id}/roles.
func (s *Server) handleCreateRole() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateRole](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newRoleResponse, func(tx *storage.Tx) (storage.Role, error) {
			return tx.CreateRole(r.Context(), storeIDFrom(r.Context()), strings.TrimSpace(req.Name.Value), normalScopes(req.Scopes.Value))
		})
	}
}

// handleUpdateRole serves PATCH /stores/{store_id}/roles/{role_id}.
func (s *Server) handleUpdateRole() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "role_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateRole](r)
		if err != nil {
			return err
		}
		var name *string
		if req.Name.Set {
			trimmed := strings.TrimSpace(req.Name.Value)
			name = &trimmed
		}
		var scopes []string
		if req.Scopes.Set {
			scopes = normalScopes(req.Scopes.Value)
		}
		return writeView(s, w, r, http.StatusOK, newRoleResponse, func(tx *storage.Tx) (storage.Role, error) {
			if current, err := tx.FindRole(r.Context(), storeIDFrom(r.Context()), id); err == nil {
				auditBefore(r.Context(), newRoleResponse(current))
			}
			return tx.UpdateRole(r.Context(), storeIDFrom(r.Context()), id, name, scopes)
		})
	}
}

// handleDeleteRole serves DELETE /stores/{store_id}/roles/{role_id}.
func (s *Server) handleDeleteRole() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "role_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteRole(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

type staffUser struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Email string    `json:"email"`
}

type staffResponse struct {
	User       staffUser    `json:"user"`
	Role       roleResponse `json:"role"`
	JoinedAt   time.Time    `json:"joined_at"`
	LastSeenAt *time.Time   `json:"last_seen_at"`
}

func newStaffResponse(m storage.StaffMember) staffResponse {
	return staffResponse{User: staffUser{ID: m.UserID, Name: m.Name, Email: m.Email}, Role: newRoleResponse(m.Role),
		JoinedAt: m.JoinedAt.UTC(), LastSeenAt: utc(m.LastSeenAt)}
}

// handleListStaff serves GET /stores/{store_id}/staff.
func (s *Server) handleListStaff() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(50)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindStaff(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(list, newStaffResponse), page, limit, total))
		return nil
	}
}

// handleChangeMemberRole serves PATCH /stores/{store_id}/staff/{user_id}.
func (s *Server) handleChangeMemberRole() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		userID, err := pathUUID(r, "user_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.MemberRole](r)
		if err != nil {
			return err
		}
		roleID, _ := request.ParseUUID(req.RoleID)
		return writeView(s, w, r, http.StatusOK, newStaffResponse, func(tx *storage.Tx) (storage.StaffMember, error) {
			if current, err := tx.FindStaffMember(r.Context(), storeIDFrom(r.Context()), userID); err == nil {
				auditBefore(r.Context(), newStaffResponse(current))
			}
			return tx.ChangeMemberRole(r.Context(), storeIDFrom(r.Context()), userID, roleID, *principalFrom(r.Context()).member)
		})
	}
}

// handleRemoveMember serves DELETE /stores/{store_id}/staff/{user_id}: the
// owner or an admin removes a member, or a member leaves; their sessions
// and the tokens they minted for the store end with it.
func (s *Server) handleRemoveMember() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		userID, err := pathUUID(r, "user_id")
		if err != nil {
			return err
		}
		p := principalFrom(r.Context())
		if p.role() == "" && p.userID != userID {
			return errRoleNotAllowed
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.RemoveMember(r.Context(), storeIDFrom(r.Context()), userID, *p.member)
		})
	}
}

type invitationResponse struct {
	ID        uuid.UUID    `json:"id"`
	Email     string       `json:"email"`
	Role      roleResponse `json:"role"`
	Status    string       `json:"status"`
	ExpiresAt time.Time    `json:"expires_at"`
	InvitedBy *uuid.UUID   `json:"invited_by"`
	CreatedAt time.Time    `json:"created_at"`
}

func newInvitationResponse(i storage.Invitation) invitationResponse {
	return invitationResponse{ID: i.ID, Email: i.Email, Role: newRoleResponse(i.Role), Status: i.Status, ExpiresAt: i.ExpiresAt.UTC(),
		InvitedBy: i.InvitedBy, CreatedAt: i.CreatedAt.UTC()}
}

// handleInvite serves POST /stores/{store_id}/staff/invitations: the mail
// goes out after commit, through the invitation-mail workflow.
func (s *Server) handleInvite() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Invitation](r)
		if err != nil {
			return err
		}
		roleID, _ := request.ParseUUID(req.RoleID)
		return s.invitationMail(r, func() error {
			return writeView(s, w, r, http.StatusCreated, newInvitationResponse, func(tx *storage.Tx) (storage.Invitation, error) {
				return tx.CreateInvitation(r.Context(), storeIDFrom(r.Context()), strings.TrimSpace(req.Email), roleID, *principalFrom(r.Context()).member)
			})
		})
	}
}

// invitationMails bound the invitation mails (invites and resends) per
// store and per inviting member, so a store's invitations cannot carry mail
// to strangers in bulk.
type invitationMails struct {
	stores, users *slidingLimiter
}

func newInvitationMails(perStore, perUser int) invitationMails {
	if perStore <= 0 {
		perStore = 30
	}
	if perUser <= 0 {
		perUser = 20
	}
	return invitationMails{stores: newSlidingLimiter("invitation-mail-store", perStore, time.Hour),
		users: newSlidingLimiter("invitation-mail-user", perUser, time.Hour)}
}

// invitationMail runs send (an invite or a resend) if the store and the
// member have room for one more mail, and counts it unless send fails:
// counted on admission, so parallel invites cannot race past the limits.
func (s *Server) invitationMail(r *http.Request, send func() error) error {
	giveBack, wait, ok := reserveAll(limitSlot{s.invitationMails.stores, storeIDFrom(r.Context()).String()},
		limitSlot{s.invitationMails.users, principalFrom(r.Context()).userID.String()})
	if !ok {
		refusal := *errInvitationMailLimited
		refusal.Header = http.Header{"Retry-After": {retryAfterSeconds(wait)}}
		return &refusal
	}
	if err := send(); err != nil {
		giveBack()
		return err
	}
	return nil
}

// handleListInvitations serves GET /stores/{store_id}/staff/invitations: the pending ones.
func (s *Server) handleListInvitations() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(50)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindPendingInvitations(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(list, newInvitationResponse), page, limit, total))
		return nil
	}
}

// handleResendInvitation serves POST /stores/{store_id}/staff/invitations/{invitation_id}/resend.
func (s *Server) handleResendInvitation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "invitation_id")
		if err != nil {
			return err
		}
		return s.invitationMail(r, func() error {
			return writeView(s, w, r, http.StatusOK, newInvitationResponse, func(tx *storage.Tx) (storage.Invitation, error) {
				return tx.ResendInvitation(r.Context(), storeIDFrom(r.Context()), id)
			})
		})
	}
}

// handleRevokeInvitation serves DELETE /stores/{store_id}/staff/invitations/{invitation_id}.
func (s *Server) handleRevokeInvitation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "invitation_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.RevokeInvitation(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

// handleLookupInvitation serves POST /api/v1/staff-invitations/lookup: what
// an invitation offers, for the accept page (404 unknown or used, 410
// expired).
func (s *Server) handleLookupInvitation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.InvitationToken](r)
		if err != nil {
			return err
		}
		inv, err := s.db.FindInvitationByToken(r.Context(), req.Token)
		if err != nil {
			return err
		}
		_, err = s.db.FindUserByEmail(r.Context(), inv.Email)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"store_name": inv.StoreName, "email": inv.Email, "role": newRoleResponse(inv.Role),
			"account_exists": err == nil})
		return nil
	}
}

// handleAcceptInvitation serves POST /api/v1/staff-invitations/accept: a
// new email creates its account (name and password); an existing account
// must be signed in as that email. Membership, the used token and a new
// session commit together.
func (s *Server) handleAcceptInvitation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.AcceptInvitation](r)
		if err != nil {
			return err
		}
		inv, err := s.db.FindInvitationByToken(r.Context(), req.Token)
		if err != nil {
			return err
		}
		signedIn, err := session.User(r, s.db, s.cfg.SecureCookies)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if signedIn != nil && !s.fromOwnPages(r) { // joining a store with the session
			return errCrossSiteRequest
		}
		existing, err := s.db.FindUserByEmail(r.Context(), inv.Email)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		exists := err == nil
		switch {
		case signedIn != nil && !strings.EqualFold(signedIn.Email, inv.Email):
			return errInvitationEmailMismatch
		case exists && signedIn == nil:
			return errInvitationSignIn
		case exists && !existing.EmailVerified:
			return errEmailNotVerified
		}
		user := existing
		var hash string
		if !exists {
			var c request.Checker
			if req.Name == nil {
				c.Add("name", "required", "is required for a new account")
			}
			if req.Password == nil {
				c.Add("password", "required", "is required for a new account")
			}
			if fields := c.Result(); fields != nil {
				return validationError(fields)
			}
			if hash, err = s.hashNewPassword(r, *req.Password); err != nil {
				return err
			}
			// The invitation's mail proved the address.
			user = storage.User{Email: inv.Email, PasswordHash: hash, Name: strings.TrimSpace(*req.Name), Locale: inv.StoreLocale,
				EmailVerified: true}
		}
		// The account, the membership, its audit entry and the session
		// (with its sign-in entries) commit together.
		secret, from := storage.NewSecret(""), s.requestSource(r)
		var sess storage.Session
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if !exists {
				if err := tx.CreateUser(r.Context(), &user); err != nil {
					return err
				}
			}
			if err := tx.AcceptInvitation(r.Context(), inv, user.ID); err != nil {
				return err
			}
			err := tx.RecordAudit(r.Context(), storage.AuditEntry{StoreID: inv.StoreID,
				Actor:  storage.AuditActor{Type: "user", ID: &user.ID, UserID: &user.ID},
				Action: "staff.joined", ResourceType: "staff", ResourceID: user.ID.String(), ResourceLabel: user.Email,
				Changes:   map[string]storage.AuditChange{"role": {From: jsonNull, To: jsonString(inv.Role.Name)}},
				RequestID: from.RequestID, IP: from.IP, UserAgent: from.UserAgent})
			if err != nil {
				return err
			}
			sess, err = tx.CreateSession(r.Context(), secret, user.ID, session.TTL, from)
			return err
		})
		if err != nil {
			return err
		}
		http.SetCookie(w, session.Cookie(secret, sess.ExpiresAt, s.cfg.SecureCookies))
		store, err := s.db.FindStoreByID(r.Context(), inv.StoreID)
		if err != nil {
			return err
		}
		respond(w, http.StatusCreated, map[string]any{"user": newUserResponse(user), "store": newStoreResponse(store), "role": newRoleResponse(inv.Role)})
		return nil
	}
}
