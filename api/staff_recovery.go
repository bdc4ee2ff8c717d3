package api

import (
	"errors"
	"net/http"
	"strings"

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
		keep := session.Secret(r, s.cfg.SecureCookies) // sessionOnly: the cookie is there
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if err := tx.SetPassword(r.Context(), user.ID, hash); err != nil {
				return err
			}
			return tx.EndSessions(r.Context(), user.ID, keep, "staff.password_changed", s.requestSource(r))
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

// recoveriesPerMinute is how many password reset requests and link
// confirmations one client network may make a minute: a person needs a
// few; the links are 256 random bits, so this bounds mail and hashing.
const recoveriesPerMinute = 10

var (
	errRecoveryRateLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
		"Too many account recovery requests from this address; try again shortly",
		"طلبات استعادة حساب كثيرة من هذا العنوان؛ حاول مجددًا بعد قليل")
	errLinkInvalid = newError(http.StatusBadRequest, "LINK_INVALID",
		"This link is unknown or was already used; ask for a new one", "هذا الرابط غير معروف أو استُخدم من قبل؛ اطلب رابطًا جديدًا")
	errLinkExpired = newError(http.StatusGone, "LINK_EXPIRED",
		"This link has expired; ask for a new one", "انتهت صلاحية هذا الرابط؛ اطلب رابطًا جديدًا")
)

// handlePasswordReset serves POST /auth/password-reset: for a known account
// a reset link is mailed after commit (the account-mail workflow); the
// answer is 202 either way, so the form tells no one which emails have
// accounts.
func (s *Server) handlePasswordReset() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.PasswordReset](r)
		if err != nil {
			return err
		}
		user, err := s.db.FindUserByEmail(r.Context(), strings.TrimSpace(req.Email))
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		default:
			err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
				_, err := tx.RequestAccountMail(r.Context(), user.ID, storage.MailPasswordReset, storage.PasswordResetTTL)
				return err
			})
			if err != nil {
				return err
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
}

// handleConfirmPasswordReset serves POST /auth/password-reset/confirm: the
// mailed link's token sets a new password, every session of the user ends,
// and this browser is signed in (the link is the proof a sign-in needs,
// also from a network the lockout holds back).
func (s *Server) handleConfirmPasswordReset() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.ConfirmPasswordReset](r)
		if err != nil {
			return err
		}
		hash, err := s.hashPassword(r, req.Password)
		if err != nil {
			return err
		}
		var user storage.User
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			userID, err := tx.UseAccountLink(r.Context(), req.Token, storage.MailPasswordReset, storage.MailSignInLock)
			if err != nil {
				return err
			}
			if err := tx.SetPassword(r.Context(), userID, hash); err != nil {
				return err
			}
			if err := tx.EndSessions(r.Context(), userID, "", "staff.password_reset", s.requestSource(r)); err != nil {
				return err
			}
			user, err = tx.FindUserByID(r.Context(), userID)
			return err
		})
		if err != nil {
			return err
		}
		return s.signIn(w, r, user)
	}
}

var errEmailNotVerified = newError(http.StatusConflict, "EMAIL_NOT_VERIFIED",
	"Confirm your email address with the link mailed at signup first, then accept", "أكّد بريدك بالرابط المرسل عند التسجيل أولًا ثم اقبل الدعوة")

// handleVerifyEmail serves POST /auth/verify-email: the token of the
// signup's mailed link proves the address. Public, as the link may be
// opened in a browser that is not signed in.
func (s *Server) handleVerifyEmail() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.VerifyEmail](r)
		if err != nil {
			return err
		}
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			userID, err := tx.UseAccountLink(r.Context(), req.Token, storage.MailEmailVerification)
			if err != nil {
				return err
			}
			return tx.VerifyEmail(r.Context(), userID)
		})
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
