package api

import (
	"errors"
	"net/http"

	"golang.org/x/crypto/bcrypt"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

// An account's own recovery and sign-out routes (docs/guide/authentication.md,
// "Passwords and sessions"). They are under no store, so what they change is
// audited the way sign-ins are: one entry in every store the user is a
// member of (staff.password_changed, staff.signed_out_everywhere).

var errCurrentPasswordWrong = newError(http.StatusForbidden, "CURRENT_PASSWORD_WRONG",
	"The current password is not right", "كلمة المرور الحالية غير صحيحة")

// handleChangePassword serves POST /auth/password: a signed-in user who
// knows the current password sets a new one, and every other browser of the
// user is signed out (the one that changed it stays signed in).
func (s *Server) handleChangePassword() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.ChangePassword](r)
		if err != nil {
			return err
		}
		p := principalFrom(r.Context())
		user, err := s.db.FindUserByID(r.Context(), p.userID)
		if err != nil {
			return err
		}
		// The check runs under the sign-in throttles: a stolen session
		// cannot guess the password faster than the login form can.
		if _, err := s.CheckPassword(r, user.Email, req.CurrentPassword); err != nil {
			if errors.Is(err, session.ErrBadLogin) {
				return errCurrentPasswordWrong
			}
			return err
		}
		hash, err := s.hashPassword(r, req.NewPassword)
		if err != nil {
			return err
		}
		keep, _ := r.Cookie(session.CookieName) // sessionOnly: the cookie is there
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if err := tx.SetPassword(r.Context(), user.ID, hash); err != nil {
				return err
			}
			return tx.EndSessions(r.Context(), user.ID, keep.Value, "staff.password_changed", s.requestSource(r))
		})
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// handleLogoutEverywhere serves POST /auth/logout-everywhere: every session
// of the user ends, this one too.
func (s *Server) handleLogoutEverywhere() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := principalFrom(r.Context())
		err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			return tx.EndSessions(r.Context(), p.userID, "", "staff.signed_out_everywhere", s.requestSource(r))
		})
		if err != nil {
			return err
		}
		if err := session.End(w, r, s.db, s.cfg.SecureCookies); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// hashPassword hashes a new password of an existing account in a hashing
// slot (a signup's goes through hashNewPassword and the signup limit).
func (s *Server) hashPassword(r *http.Request, password string) (string, error) {
	var hash []byte
	err := s.passwords.hashing(r.Context(), func() (err error) {
		hash, err = bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		return err
	})
	return string(hash), err
}
