package storage

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Staff (decisions §16): a store's members each hold one role; the
// built-in owner (one per store, never assigned) and admin hold every
// scope, a custom role the scopes it names. Membership is read on every
// request, so a role change applies to the next one.

// Built-in roles.
const (
	RoleOwner = "owner"
	RoleAdmin = "admin"
)

// InvitationTTL is how long an invitation's link works.
const InvitationTTL = 7 * 24 * time.Hour

// Staff refusals.
var (
	ErrDuplicateRoleName = errors.New("duplicate role name")
	ErrRoleBuiltIn       = errors.New("built-in role")
	ErrOwnerImmutable    = errors.New("the owner's membership is fixed")
	ErrRoleNotAllowed    = errors.New("only the owner grants, changes or removes admin")
	ErrAlreadyMember     = errors.New("already a member")
	ErrInvitationPending = errors.New("an invitation is pending")
	ErrInvitationExpired = errors.New("invitation expired")
	ErrInvitationLimit   = errors.New("too many pending invitations")
)

// MaxPendingInvitations is how many invitations a store may have pending at
// once: a team grows by a few people at a time, and a store that invites
// more is mailing strangers.
const MaxPendingInvitations = 50

// RoleInUseError is a role members still hold.
type RoleInUseError struct{ MemberCount int }

func (e *RoleInUseError) Error() string { return fmt.Sprintf("role held by %d members", e.MemberCount) }

// ScopeDomains are the domains of spec §5.1; each has :read and :write, the
// 18 scopes tokens carry and roles are made of.
var ScopeDomains = []string{"catalog", "media", "orders", "customers", "analytics", "marketing", "themes", "risk", "settings"}

// Role is one of a store's roles.
type Role struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	Name        string
	BuiltIn     *string // owner or admin
	Scopes      []string
	MemberCount int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Membership is what a user may do in a store.
type Membership struct {
	StoreID    uuid.UUID
	UserID     uuid.UUID
	RoleID     uuid.UUID
	RoleName   string
	BuiltIn    string // "", owner or admin
	Scopes     []string
	LastSeenAt *time.Time
	// StoreState is the store's lifecycle state, read with the membership
	// by FindMembership and FindSessionMember.
	StoreState string
}

// StoreOpen reports whether the member's store may still be used: not
// suspended or closed (a session of a closed store answers as its tokens do).
func (m Membership) StoreOpen() bool { return storeOpen(m.StoreState) }

// Everything reports whether the role holds every scope (owner, admin).
func (m Membership) Everything() bool { return m.BuiltIn != "" }

// Allows reports whether the role holds scope (decisions §16): the owner
// and admins hold every scope, a custom role its own, `:write` implying
// `:read`. The API's scope checks and the merchant pages both ask it.
func (m Membership) Allows(scope string) bool { return m.Everything() || ScopesGrant(m.Scopes, scope) }

// ScopesGrant reports whether scopes grant scope, `:write` implying `:read`.
func ScopesGrant(scopes []string, scope string) bool {
	if slices.Contains(scopes, scope) {
		return true
	}
	domain, access, _ := strings.Cut(scope, ":")
	return access == "read" && slices.Contains(scopes, domain+":write")
}

const roleColumns = `r.id, r.store_id, r.name, r.built_in, r.scopes, r.created_at, r.updated_at,
	(SELECT count(*) FROM store_members m WHERE m.role_id = r.id)`

func scanRole(row pgx.Row) (Role, error) {
	var r Role
	err := row.Scan(&r.ID, &r.StoreID, &r.Name, &r.BuiltIn, &r.Scopes, &r.CreatedAt, &r.UpdatedAt, &r.MemberCount)
	return r, err
}

// createBuiltInRoles gives a new store its owner and admin roles and makes
// the owner its first member.
func (tx *Tx) createBuiltInRoles(ctx context.Context, s Store) error {
	ownerRole := NewID()
	if _, err := tx.tx.Exec(ctx, `INSERT INTO roles (id, store_id, name, built_in, created_at, updated_at)
		VALUES ($1, $3, 'Owner', 'owner', $4, $4), ($2, $3, 'Admin', 'admin', $4, $4)`, ownerRole, NewID(), s.ID, s.CreatedAt); err != nil {
		return fmt.Errorf("create built-in roles: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO store_members (store_id, user_id, role_id, joined_at) VALUES ($1, $2, $3, $4)`,
		s.ID, s.OwnerUserID, ownerRole, s.CreatedAt); err != nil {
		return fmt.Errorf("add the owner: %w", err)
	}
	return nil
}

// FindMembership is the user's role in the store (ErrNotFound: not a member).
func (r reader) FindMembership(ctx context.Context, storeID, userID uuid.UUID) (Membership, error) {
	m := Membership{StoreID: storeID, UserID: userID}
	err := r.q.QueryRow(ctx, `SELECT m.role_id, r.name, COALESCE(r.built_in, ''), r.scopes, m.last_seen_at, st.lifecycle_state
		FROM store_members m JOIN roles r ON r.id = m.role_id JOIN stores st ON st.id = m.store_id
		WHERE m.store_id = $1 AND m.user_id = $2`, storeID, userID).
		Scan(&m.RoleID, &m.RoleName, &m.BuiltIn, &m.Scopes, &m.LastSeenAt, &m.StoreState)
	if err != nil {
		return Membership{}, notFoundIfNoRows(err, "find membership")
	}
	return m, nil
}

// FindSessionMember reads a live session and, in the same query, the
// session user's membership of storeID (nil when not a member): a session
// on a store route costs one round trip, as a token does.
func (db *DB) FindSessionMember(ctx context.Context, secret string, storeID uuid.UUID) (Session, *Membership, error) {
	var s Session
	var roleID *uuid.UUID
	m := Membership{StoreID: storeID}
	var roleName, builtIn, storeState *string
	err := db.pool.QueryRow(ctx, `SELECT s.user_id, s.expires_at, m.role_id, r.name, COALESCE(r.built_in, ''), r.scopes, m.last_seen_at,
			st.lifecycle_state
		FROM sessions s
		LEFT JOIN store_members m ON m.store_id = $2 AND m.user_id = s.user_id
		LEFT JOIN roles r ON r.id = m.role_id
		LEFT JOIN stores st ON st.id = m.store_id
		WHERE s.id_hash = $1 AND s.expires_at > $3`, HashSecret(secret), storeID, db.now()).
		Scan(&s.UserID, &s.ExpiresAt, &roleID, &roleName, &builtIn, &m.Scopes, &m.LastSeenAt, &storeState)
	if err != nil {
		return Session{}, nil, notFoundIfNoRows(err, "find session")
	}
	if roleID == nil {
		return s, nil, nil
	}
	m.UserID, m.RoleID, m.RoleName, m.BuiltIn, m.StoreState = s.UserID, *roleID, *roleName, *builtIn, *storeState
	return s, &m, nil
}

// TouchMember records that a member was seen, at most every five minutes.
func (db *DB) TouchMember(ctx context.Context, storeID, userID uuid.UUID) error {
	now := db.now()
	_, err := db.pool.Exec(ctx, `UPDATE store_members SET last_seen_at = $3 WHERE store_id = $1 AND user_id = $2
		AND (last_seen_at IS NULL OR last_seen_at < $4)`, storeID, userID, now, now.Add(-5*time.Minute))
	return err
}

// MemberStore is a store a user belongs to, with the role there.
type MemberStore struct {
	Store      Store
	Membership Membership
}

// FindMemberStores lists the stores a user belongs to, oldest membership
// first.
func (r reader) FindMemberStores(ctx context.Context, userID uuid.UUID) ([]MemberStore, error) {
	rows, err := r.q.Query(ctx, `SELECT s.`+strings.ReplaceAll(storeColumns, ", ", ", s.")+`,
			m.role_id, ro.name, COALESCE(ro.built_in, ''), ro.scopes, m.last_seen_at
		FROM store_members m JOIN stores s ON s.id = m.store_id JOIN roles ro ON ro.id = m.role_id
		WHERE m.user_id = $1 ORDER BY m.joined_at, m.store_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("find member stores: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (MemberStore, error) {
		var ms MemberStore
		m := &ms.Membership
		err := row.Scan(append(ms.Store.fields(), &m.RoleID, &m.RoleName, &m.BuiltIn, &m.Scopes, &m.LastSeenAt)...)
		m.StoreID, m.UserID = ms.Store.ID, userID
		return ms, err
	})
	if err != nil {
		return nil, fmt.Errorf("find member stores: %w", err)
	}
	return list, nil
}

// FindRoles lists a store's roles: the built-in ones, then the others by
// name.
func (r reader) FindRoles(ctx context.Context, storeID uuid.UUID) ([]Role, error) {
	rows, err := r.q.Query(ctx, `SELECT `+roleColumns+` FROM roles r WHERE r.store_id = $1
		ORDER BY r.built_in = 'owner' DESC NULLS LAST, r.built_in IS NOT NULL DESC, lower(r.name), r.id`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find roles: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Role, error) { return scanRole(row) })
}

// FindRole reads one of a store's roles.
func (r reader) FindRole(ctx context.Context, storeID, id uuid.UUID) (Role, error) {
	role, err := scanRole(r.q.QueryRow(ctx, `SELECT `+roleColumns+` FROM roles r WHERE r.store_id = $1 AND r.id = $2`, storeID, id))
	if err != nil {
		return Role{}, notFoundIfNoRows(err, "find role")
	}
	return role, nil
}

// CreateRole adds a custom role.
func (tx *Tx) CreateRole(ctx context.Context, storeID uuid.UUID, name string, scopes []string) (Role, error) {
	now := tx.now()
	id := NewID()
	if _, err := tx.tx.Exec(ctx, `INSERT INTO roles (id, store_id, name, scopes, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		id, storeID, name, scopes, now); err != nil {
		if isUniqueViolation(err, "roles_store_name_idx") {
			return Role{}, ErrDuplicateRoleName
		}
		return Role{}, fmt.Errorf("create role: %w", err)
	}
	return tx.FindRole(ctx, storeID, id)
}

// UpdateRole renames a custom role or replaces its scopes; its members
// hold the new scopes from their next request.
func (tx *Tx) UpdateRole(ctx context.Context, storeID, id uuid.UUID, name *string, scopes []string) (Role, error) {
	role, err := tx.lockRole(ctx, storeID, id)
	if err != nil {
		return Role{}, err
	}
	if name != nil {
		role.Name = *name
	}
	if scopes != nil {
		role.Scopes = scopes
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE roles SET name = $3, scopes = $4, updated_at = $5 WHERE store_id = $1 AND id = $2`,
		storeID, id, role.Name, role.Scopes, tx.now()); err != nil {
		if isUniqueViolation(err, "roles_store_name_idx") {
			return Role{}, ErrDuplicateRoleName
		}
		return Role{}, fmt.Errorf("update role: %w", err)
	}
	return tx.FindRole(ctx, storeID, id)
}

// DeleteRole deletes a custom role no member holds (its invitations go
// with it).
func (tx *Tx) DeleteRole(ctx context.Context, storeID, id uuid.UUID) error {
	role, err := tx.lockRole(ctx, storeID, id)
	if err != nil {
		return err
	}
	if role.MemberCount > 0 {
		return &RoleInUseError{MemberCount: role.MemberCount}
	}
	_, err = tx.tx.Exec(ctx, `DELETE FROM roles WHERE store_id = $1 AND id = $2`, storeID, id)
	return err
}

// lockRole locks a custom role for a change (ErrRoleBuiltIn for owner and
// admin).
func (tx *Tx) lockRole(ctx context.Context, storeID, id uuid.UUID) (Role, error) {
	role, err := scanRole(tx.tx.QueryRow(ctx, `SELECT `+roleColumns+` FROM roles r WHERE r.store_id = $1 AND r.id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Role{}, notFoundIfNoRows(err, "find role")
	}
	if role.BuiltIn != nil {
		return Role{}, ErrRoleBuiltIn
	}
	return role, nil
}

// StaffMember is a member as the staff list shows them.
type StaffMember struct {
	UserID     uuid.UUID
	Name       string
	Email      string
	Role       Role
	JoinedAt   time.Time
	LastSeenAt *time.Time
}

// FindStaff lists a store's members, the owner first, then by joining.
func (r reader) FindStaff(ctx context.Context, storeID uuid.UUID, page Page) ([]StaffMember, int, error) {
	rows, err := r.q.Query(ctx, `SELECT u.id, u.name, u.email, m.joined_at, m.last_seen_at, `+roleColumns+`, count(*) OVER ()
		FROM store_members m JOIN users u ON u.id = m.user_id JOIN roles r ON r.id = m.role_id
		WHERE m.store_id = $1 ORDER BY r.built_in = 'owner' DESC NULLS LAST, m.joined_at, u.id LIMIT $2 OFFSET $3`,
		storeID, page.Limit, page.Offset())
	if err != nil {
		return nil, 0, fmt.Errorf("find staff: %w", err)
	}
	total := 0
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StaffMember, error) {
		var s StaffMember
		err := row.Scan(&s.UserID, &s.Name, &s.Email, &s.JoinedAt, &s.LastSeenAt, &s.Role.ID, &s.Role.StoreID, &s.Role.Name, &s.Role.BuiltIn,
			&s.Role.Scopes, &s.Role.CreatedAt, &s.Role.UpdatedAt, &s.Role.MemberCount, &total)
		return s, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("find staff: %w", err)
	}
	if len(list) == 0 && page.Page > 1 {
		err = r.q.QueryRow(ctx, `SELECT count(*) FROM store_members WHERE store_id = $1`, storeID).Scan(&total)
	}
	return list, total, err
}

// FindStaffMember reads one member.
func (r reader) FindStaffMember(ctx context.Context, storeID, userID uuid.UUID) (StaffMember, error) {
	var s StaffMember
	err := r.q.QueryRow(ctx, `SELECT u.id, u.name, u.email, m.joined_at, m.last_seen_at, `+roleColumns+`
		FROM store_members m JOIN users u ON u.id = m.user_id JOIN roles r ON r.id = m.role_id
		WHERE m.store_id = $1 AND m.user_id = $2`, storeID, userID).
		Scan(&s.UserID, &s.Name, &s.Email, &s.JoinedAt, &s.LastSeenAt, &s.Role.ID, &s.Role.StoreID, &s.Role.Name, &s.Role.BuiltIn,
			&s.Role.Scopes, &s.Role.CreatedAt, &s.Role.UpdatedAt, &s.Role.MemberCount)
	if err != nil {
		return StaffMember{}, notFoundIfNoRows(err, "find staff member")
	}
	return s, nil
}

// assignableRole is a role of the store a member or invitation may hold:
// not owner; admin only when the actor is the owner.
func (tx *Tx) assignableRole(ctx context.Context, storeID, roleID uuid.UUID, actor Membership) (Role, error) {
	role, err := tx.FindRole(ctx, storeID, roleID)
	if errors.Is(err, ErrNotFound) {
		return Role{}, &InvalidError{Field: "role_id", Code: "not_found", Message: "is not a role of the store"}
	}
	if err != nil {
		return Role{}, err
	}
	if role.BuiltIn != nil && *role.BuiltIn == RoleOwner {
		return Role{}, &InvalidError{Field: "role_id", Code: "not_assignable", Message: "the owner role is not assignable"}
	}
	if role.BuiltIn != nil && *role.BuiltIn == RoleAdmin && actor.BuiltIn != RoleOwner {
		return Role{}, ErrRoleNotAllowed
	}
	return role, nil
}

// lockMember locks a member for a change by actor: the owner's membership
// is fixed, and only the owner changes an admin's.
func (tx *Tx) lockMember(ctx context.Context, storeID, userID uuid.UUID, actor Membership) (string, error) {
	var builtIn string
	err := tx.tx.QueryRow(ctx, `SELECT COALESCE(r.built_in, '') FROM store_members m JOIN roles r ON r.id = m.role_id
		WHERE m.store_id = $1 AND m.user_id = $2 FOR UPDATE OF m`, storeID, userID).Scan(&builtIn)
	if err != nil {
		return "", notFoundIfNoRows(err, "find staff member")
	}
	switch {
	case builtIn == RoleOwner:
		return "", ErrOwnerImmutable
	case builtIn == RoleAdmin && actor.BuiltIn != RoleOwner && actor.UserID != userID:
		return "", ErrRoleNotAllowed
	}
	return builtIn, nil
}

// ChangeMemberRole gives a member another role, from their next request.
func (tx *Tx) ChangeMemberRole(ctx context.Context, storeID, userID, roleID uuid.UUID, actor Membership) (StaffMember, error) {
	if _, err := tx.lockMember(ctx, storeID, userID, actor); err != nil {
		return StaffMember{}, err
	}
	if _, err := tx.assignableRole(ctx, storeID, roleID, actor); err != nil {
		return StaffMember{}, err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE store_members SET role_id = $3 WHERE store_id = $1 AND user_id = $2`, storeID, userID, roleID); err != nil {
		return StaffMember{}, fmt.Errorf("change role: %w", err)
	}
	return tx.FindStaffMember(ctx, storeID, userID)
}

// RemoveMember ends a membership, every session of the user (their next
// request answers 401) and the access tokens they minted for the store,
// all in the caller's transaction.
func (tx *Tx) RemoveMember(ctx context.Context, storeID, userID uuid.UUID, actor Membership) error {
	if _, err := tx.lockMember(ctx, storeID, userID, actor); err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM store_members WHERE store_id = $1 AND user_id = $2`, storeID, userID); err != nil {
		return fmt.Errorf("remove member: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE api_tokens SET revoked_at = $3 WHERE store_id = $1 AND user_id = $2 AND kind = 'pat' AND revoked_at IS NULL`,
		storeID, userID, tx.now()); err != nil {
		return fmt.Errorf("revoke tokens: %w", err)
	}
	return nil
}

// Invitation is an invitation to join a store's staff.
type Invitation struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	Email       string
	Role        Role
	Status      string
	ExpiresAt   time.Time
	InvitedBy   *uuid.UUID
	CreatedAt   time.Time
	AcceptedAt  *time.Time
	StoreName   string
	StoreLocale string
}

const invitationColumns = `i.id, i.store_id, i.email, i.status, i.expires_at, i.invited_by, i.created_at, i.accepted_at,
	s.name, s.default_language, ` + roleColumns

func scanInvitation(row pgx.Row) (Invitation, error) {
	var i Invitation
	err := row.Scan(&i.ID, &i.StoreID, &i.Email, &i.Status, &i.ExpiresAt, &i.InvitedBy, &i.CreatedAt, &i.AcceptedAt,
		&i.StoreName, &i.StoreLocale, &i.Role.ID, &i.Role.StoreID, &i.Role.Name, &i.Role.BuiltIn, &i.Role.Scopes, &i.Role.CreatedAt,
		&i.Role.UpdatedAt, &i.Role.MemberCount)
	return i, err
}

const invitationFrom = ` FROM staff_invitations i JOIN stores s ON s.id = i.store_id JOIN roles r ON r.id = i.role_id `

// CreateInvitation invites an email to a role; the mail (with its token)
// goes out through the invitation-mail workflow after commit.
func (tx *Tx) CreateInvitation(ctx context.Context, storeID uuid.UUID, email string, roleID uuid.UUID, actor Membership) (Invitation, error) {
	if _, err := tx.assignableRole(ctx, storeID, roleID, actor); err != nil {
		return Invitation{}, err
	}
	var member bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM store_members m JOIN users u ON u.id = m.user_id
		WHERE m.store_id = $1 AND lower(u.email) = lower($2))`, storeID, email).Scan(&member); err != nil {
		return Invitation{}, fmt.Errorf("check membership: %w", err)
	}
	if member {
		return Invitation{}, ErrAlreadyMember
	}
	now := tx.now()
	id := NewID()
	// A pending invitation past its time no longer blocks a new one.
	if _, err := tx.tx.Exec(ctx, `UPDATE staff_invitations SET status = 'revoked', updated_at = $3
		WHERE store_id = $1 AND lower(email) = lower($2) AND status = 'pending' AND expires_at <= $3`, storeID, email, now); err != nil {
		return Invitation{}, fmt.Errorf("retire expired invitation: %w", err)
	}
	// The store's invites take turns here, so parallel ones cannot all see
	// room under the cap.
	var pending int
	if _, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('staff_invitations:' || $1, 0))`, storeID.String()); err != nil {
		return Invitation{}, fmt.Errorf("lock invitations: %w", err)
	}
	if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM staff_invitations WHERE store_id = $1 AND status = 'pending' AND expires_at > $2`,
		storeID, now).Scan(&pending); err != nil {
		return Invitation{}, fmt.Errorf("count pending invitations: %w", err)
	}
	if pending >= MaxPendingInvitations {
		return Invitation{}, ErrInvitationLimit
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO staff_invitations (id, store_id, email, role_id, expires_at, invited_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, id, storeID, email, roleID, now.Add(InvitationTTL), actor.UserID, now); err != nil {
		if isUniqueViolation(err, "staff_invitations_pending_idx") {
			return Invitation{}, ErrInvitationPending
		}
		return Invitation{}, fmt.Errorf("create invitation: %w", err)
	}
	return tx.findInvitation(ctx, storeID, id)
}

func (r reader) findInvitation(ctx context.Context, storeID, id uuid.UUID) (Invitation, error) {
	i, err := scanInvitation(r.q.QueryRow(ctx, `SELECT `+invitationColumns+invitationFrom+`WHERE i.store_id = $1 AND i.id = $2`, storeID, id))
	if err != nil {
		return Invitation{}, notFoundIfNoRows(err, "find invitation")
	}
	return i, nil
}

// FindPendingInvitations lists a store's pending invitations, newest first.
func (r reader) FindPendingInvitations(ctx context.Context, storeID uuid.UUID, page Page) ([]Invitation, int, error) {
	rows, err := r.q.Query(ctx, `SELECT `+invitationColumns+invitationFrom+`WHERE i.store_id = $1 AND i.status = 'pending'
		ORDER BY i.created_at DESC, i.id LIMIT $2 OFFSET $3`, storeID, page.Limit, page.Offset())
	if err != nil {
		return nil, 0, fmt.Errorf("find invitations: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Invitation, error) { return scanInvitation(row) })
	if err != nil {
		return nil, 0, fmt.Errorf("find invitations: %w", err)
	}
	var total int
	err = r.q.QueryRow(ctx, `SELECT count(*) FROM staff_invitations WHERE store_id = $1 AND status = 'pending'`, storeID).Scan(&total)
	return list, total, err
}

// ResendInvitation asks for another mail with a new token (the last link
// stops working when it is minted) and another seven days.
func (tx *Tx) ResendInvitation(ctx context.Context, storeID, id uuid.UUID) (Invitation, error) {
	now := tx.now()
	tag, err := tx.tx.Exec(ctx, `UPDATE staff_invitations SET token_hash = NULL, mail_wanted = mail_wanted + 1, expires_at = $3, updated_at = $4
		WHERE store_id = $1 AND id = $2 AND status = 'pending'`, storeID, id, now.Add(InvitationTTL), now)
	if err != nil {
		return Invitation{}, fmt.Errorf("resend invitation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Invitation{}, ErrNotFound
	}
	return tx.findInvitation(ctx, storeID, id)
}

// RevokeInvitation kills a pending invitation's link.
func (tx *Tx) RevokeInvitation(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `UPDATE staff_invitations SET status = 'revoked', token_hash = NULL, updated_at = $3
		WHERE store_id = $1 AND id = $2 AND status = 'pending'`, storeID, id, tx.now())
	if err != nil {
		return fmt.Errorf("revoke invitation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// InvitationMailDue is an invitation whose latest mail has not started.
type InvitationMailDue struct {
	StoreID, InvitationID uuid.UUID
	Mail                  int
	StoreSubdomain        string
}

// FindInvitationMailsDue lists the invitation mails to start.
func (r reader) FindInvitationMailsDue(ctx context.Context, limit int) ([]InvitationMailDue, error) {
	rows, err := r.q.Query(ctx, `SELECT i.store_id, i.id, i.mail_wanted, s.subdomain FROM staff_invitations i JOIN stores s ON s.id = i.store_id
		WHERE i.mail_started < i.mail_wanted AND i.status = 'pending' ORDER BY i.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find invitation mails: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[InvitationMailDue])
}

// MarkInvitationMailStarted records that mail number n has its workflow.
func (db *DB) MarkInvitationMailStarted(ctx context.Context, storeID, id uuid.UUID, n int) error {
	_, err := db.pool.Exec(ctx, `UPDATE staff_invitations SET mail_started = greatest(mail_started, $3) WHERE store_id = $1 AND id = $2`, storeID, id, n)
	return err
}

// ErrInvitationMailSuperseded is a mail a resend or the invitation's end
// made pointless.
var ErrInvitationMailSuperseded = errors.New("invitation mail superseded")

// MintInvitationToken gives mail number n of a pending invitation its
// token (svc_inv_ + 32 random bytes; only the hash is kept, so the last
// mailed link is the only one that works).
func (db *DB) MintInvitationToken(ctx context.Context, storeID, id uuid.UUID, n int) (Invitation, string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return Invitation{}, "", err
	}
	token := "svc_inv_" + base64.RawURLEncoding.EncodeToString(secret)
	tag, err := db.pool.Exec(ctx, `UPDATE staff_invitations SET token_hash = $4 WHERE store_id = $1 AND id = $2 AND mail_wanted = $3
		AND status = 'pending'`, storeID, id, n, hashToken(token))
	if err != nil {
		return Invitation{}, "", fmt.Errorf("mint invitation token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Invitation{}, "", ErrInvitationMailSuperseded
	}
	inv, err := db.findInvitation(ctx, storeID, id)
	return inv, token, err
}

// FindInvitationByToken is the pending invitation a token opens:
// ErrNotFound for an unknown, used or revoked token, ErrInvitationExpired
// past its seven days.
func (r reader) FindInvitationByToken(ctx context.Context, token string) (Invitation, error) {
	if !strings.HasPrefix(token, "svc_inv_") {
		return Invitation{}, ErrNotFound
	}
	i, err := scanInvitation(r.q.QueryRow(ctx, `SELECT `+invitationColumns+invitationFrom+`WHERE i.token_hash = $1`, hashToken(token)))
	if err != nil {
		return Invitation{}, notFoundIfNoRows(err, "find invitation")
	}
	if i.Status != "pending" {
		return Invitation{}, ErrNotFound
	}
	if !i.ExpiresAt.After(time.Now()) {
		return Invitation{}, ErrInvitationExpired
	}
	return i, nil
}

// AcceptInvitation makes user a member with the invitation's role and
// uses the token up, in the caller's transaction.
func (tx *Tx) AcceptInvitation(ctx context.Context, inv Invitation, userID uuid.UUID) error {
	now := tx.now()
	tag, err := tx.tx.Exec(ctx, `UPDATE staff_invitations SET status = 'accepted', token_hash = NULL, accepted_at = $3, updated_at = $3
		WHERE store_id = $1 AND id = $2 AND status = 'pending'`, inv.StoreID, inv.ID, now)
	if err != nil {
		return fmt.Errorf("accept invitation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound // accepted or revoked meanwhile
	}
	_, err = tx.tx.Exec(ctx, `INSERT INTO store_members (store_id, user_id, role_id, joined_at) VALUES ($1, $2, $3, $4)`,
		inv.StoreID, userID, inv.Role.ID, now)
	if isUniqueViolation(err, "store_members_pkey") {
		return ErrAlreadyMember
	}
	if err != nil {
		return fmt.Errorf("add member: %w", err)
	}
	return nil
}
