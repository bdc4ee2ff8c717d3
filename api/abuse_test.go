package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

func (h *harness) login(email, password string) response {
	h.t.Helper()
	return h.do(request{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": password}})
}

// Ten failures lock an account for the window against a new network,
// whatever password comes next, and the lock answers before any password
// check; other accounts are untouched.
func TestSignInLocksAnAccountAfterTenFailures(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("locked")
	other := h.signup("unlocked")
	// Loopback signed both up; forgotten, it is a new network, which the
	// lock holds back (TestLockedAccountStillLetsItsKnownNetworksIn has the
	// known ones).
	h.exec(`DELETE FROM sign_in_networks`)
	for i := range 10 {
		require.Equal(t, http.StatusUnauthorized, h.login(m.email, "wrong password "+strconv.Itoa(i)).Status, "failure %d", i+1)
	}
	for _, password := range []string{"wrong again!", "correct horse battery"} {
		locked := h.login(m.email, password)
		require.Equal(t, http.StatusTooManyRequests, locked.Status, string(locked.Raw))
		require.Equal(t, "RATE_LIMITED", locked.errorCode())
		require.NotEmpty(t, locked.errorField("message_ar"))
		wait, err := strconv.Atoi(locked.Header.Get("Retry-After"))
		require.NoError(t, err)
		require.True(t, wait > 14*60 && wait <= 15*60, "Retry-After %d", wait)
		require.Empty(t, locked.Header.Values("Set-Cookie"), "no session")
	}
	// The email's case and spaces do not make another account.
	require.Equal(t, http.StatusTooManyRequests, h.login(" "+m.email, "correct horse battery").Status)
	require.Equal(t, http.StatusOK, h.login(other.email, "correct horse battery").Status)
}

// Failures from one network lock it for every account, so guessing one
// password across many accounts is bounded too.
func TestSignInLimitsFailuresPerNetwork(t *testing.T) {
	h := newHarness(t, api.Config{Passwords: api.PasswordLimits{FailuresPerAddress: 5}})
	m := h.signup("network")
	for i := range 5 {
		require.Equal(t, http.StatusUnauthorized, h.login(fmt.Sprintf("nobody%d@example.com", i), "guess guess guess").Status)
	}
	refused := h.login(m.email, "correct horse battery")
	require.Equal(t, http.StatusTooManyRequests, refused.Status)
	require.NotEmpty(t, refused.Header.Get("Retry-After"))

	// The sign-in page is behind the same limit, in Arabic by default.
	b := h.newBrowser()
	_, page := b.get("/login")
	resp, body := b.post("/login", url.Values{"csrf": {csrfOf(t, page)}, "email": {m.email}, "password": {"correct horse battery"}, "next": {"/"}})
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	require.Contains(t, body, "محاولات دخول فاشلة كثيرة")
	// The English page's form keeps its language through the refusal.
	en := h.newBrowser()
	_, page = en.get("/login?lang=en")
	require.Contains(t, page, `action="/login?lang=en"`)
	resp, body = en.post("/login?lang=en", url.Values{"csrf": {csrfOf(t, page)}, "email": {m.email}, "password": {"correct horse battery"}, "next": {"/"}})
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Contains(t, body, "Too many failed sign-ins")
	require.Contains(t, body, `href="/login?next=%2F"`, "the language link goes to the Arabic page")
}

// The per-network failure limit counts a sign-in when it is admitted: 60
// wrong passwords at once from one network are checked (hashed) at most
// the limit's 10 times, the rest refused before any hashing (counting only
// after the check let the whole burst reach bcrypt). A right password gives
// its count back.
func TestSignInNetworkLimitHoldsUnderABurst(t *testing.T) {
	h := newHarness(t, api.Config{Passwords: api.PasswordLimits{FailuresPerAddress: 10, Wait: time.Minute}})
	m := h.signup("burst")
	for range 3 {
		require.Equal(t, http.StatusOK, h.login(m.email, "correct horse battery").Status, "successes hold no count")
	}
	statuses := burst(60, func(i int) int {
		return h.login(fmt.Sprintf("burst%d@example.com", i), "not the password").Status
	})
	require.Equal(t, map[int]int{http.StatusUnauthorized: 10, http.StatusTooManyRequests: 50}, statuses)
}

// Signups are limited per network; a taken email answers the 409 decisions
// §2 requires, and the limit bounds how many emails one client can probe.
func TestSignupLimitPerNetwork(t *testing.T) {
	h := newHarness(t, api.Config{Passwords: api.PasswordLimits{SignupsPerAddress: 10}})
	first := h.signup("probe")
	taken := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: map[string]any{
		"email": first.email, "password": "correct horse battery", "name": "Someone",
		"store": map[string]any{"name": "Store", "subdomain": "probe-taken-email", "currency": "EGP", "default_language": "ar"}}})
	require.Equal(t, http.StatusConflict, taken.Status)
	for range 8 {
		h.signup("probe")
	}
	over := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: map[string]any{
		"email": "eleventh@example.com", "password": "correct horse battery", "name": "Someone",
		"store": map[string]any{"name": "Store", "subdomain": "probe-eleventh", "currency": "EGP", "default_language": "ar"}}})
	require.Equal(t, http.StatusTooManyRequests, over.Status, string(over.Raw))
	require.NotEmpty(t, over.Header.Get("Retry-After"))
	require.Equal(t, http.StatusUnauthorized, h.login("eleventh@example.com", "correct horse battery").Status, "nothing was created")
}

// A flood of password checks waits for a hashing slot and is shed with 503
// when none frees up; requests that hash nothing are not held up.
func TestPasswordHashingIsCapped(t *testing.T) {
	h := newHarness(t, api.Config{Passwords: api.PasswordLimits{Concurrent: 1, Wait: 30 * time.Millisecond, FailuresPerAddress: 1000}})
	m := h.signup("flood")
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		retry    []string
	)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.login(fmt.Sprintf("flood%d@example.com", i), "not the password")
			mu.Lock()
			defer mu.Unlock()
			statuses[r.Status]++
			if r.Status == http.StatusServiceUnavailable {
				require.Equal(t, "SERVER_BUSY", r.errorCode())
				retry = append(retry, r.Header.Get("Retry-After"))
			}
		}()
	}
	start := time.Now()
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: "/api/v1/auth/me", auth: m.auth()}).Status)
	require.Less(t, time.Since(start), 500*time.Millisecond, "a request without a password check does not queue")
	wg.Wait()
	require.Positive(t, statuses[http.StatusServiceUnavailable], "%v", statuses)
	require.Positive(t, statuses[http.StatusUnauthorized], "%v", statuses)
	require.Equal(t, 16, statuses[http.StatusServiceUnavailable]+statuses[http.StatusUnauthorized], "%v", statuses)
	require.Equal(t, "1", retry[0])
}

// A storefront cart holds at most the store's pieces per line and per
// order; the store may change both, and checkout checks them again.
func TestStorefrontQuantityCaps(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "caps", 100_000)
	scarf := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Scarf", "price": 1000})
	lines := []map[string]any{{"variant_id": s.variantID, "quantity": 50}}
	for _, color := range []string{"red", "blue", "green", "black"} {
		v := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+scarf["id"].(string)+"/variants"), auth: bearer(s.token),
			body: map[string]any{"sku": "CAPS-SCARF-" + color, "quantity": 100_000, "options": map[string]any{"color": color}}})
		require.Equal(t, http.StatusCreated, v.Status, string(v.Raw))
		lines = append(lines, map[string]any{"variant_id": v.Body["id"], "quantity": 50})
	}
	lines[4]["quantity"] = 1 // 201 pieces in all
	settings := h.do(request{method: "GET", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token)})
	require.EqualValues(t, 50, settings.data()["max_line_quantity"])
	require.EqualValues(t, 200, settings.data()["max_order_quantity"])

	line := h.buyer(s, "POST", "/carts", map[string]any{"lines": []map[string]any{{"variant_id": s.variantID, "quantity": 51}}}, "")
	require.Equal(t, http.StatusUnprocessableEntity, line.Status, string(line.Raw))
	require.Equal(t, []string{"lines[0].quantity"}, line.fieldNames())
	cartID, token := h.openCart(s, 50, "")
	order := h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"lines": lines}, token)
	require.Equal(t, http.StatusUnprocessableEntity, order.Status, string(order.Raw))
	require.Equal(t, []string{"lines"}, order.fieldNames())
	require.EqualValues(t, 50, h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()["item_count"], "nothing changed")

	for _, bad := range []map[string]any{{"max_line_quantity": 0}, {"max_order_quantity": 2_000_000}, {"max_line_quantity": nil}} {
		refused := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token), body: bad})
		require.Equal(t, http.StatusUnprocessableEntity, refused.Status, "%v", bad)
	}
	require.Equal(t, http.StatusOK, h.settings(s, map[string]any{"max_line_quantity": 10}).Status)
	checkout := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token)
	require.Equal(t, http.StatusUnprocessableEntity, checkout.Status, string(checkout.Raw))
	require.Equal(t, []string{"lines[0].quantity"}, checkout.fieldNames())
	require.Equal(t, 100_000, h.variantQuantity(s), "no stock taken")
	require.Equal(t, http.StatusOK, h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"lines": []map[string]any{{"variant_id": s.variantID, "quantity": 10}}}, token).Status)
	require.Equal(t, http.StatusCreated, h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token).Status)
}

// One phone number places at most five storefront orders an hour in a
// store, one client network ten; refusals take nothing.
func TestStorefrontOrdersPerPhoneAndNetwork(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontOrdersPerPhone: 5, StorefrontOrdersPerNetwork: 7})
	s := newShop(t, h, "perphone", 1000)
	place := func(phone string) response {
		cartID, token := h.openCart(s, 1, "")
		body := checkoutBody("cod")
		body["customer"].(map[string]any)["phone"] = phone
		body["shipping_address"].(map[string]any)["phone"] = phone
		return h.buyer(s, "POST", "/carts/"+cartID+"/checkout", body, token)
	}
	for i := range 5 {
		require.Equal(t, http.StatusCreated, place("+201005550001").Status, "order %d", i+1)
	}
	refused := place("+20 100 555 0001")
	require.Equal(t, http.StatusTooManyRequests, refused.Status, string(refused.Raw))
	require.Equal(t, "RATE_LIMITED", refused.errorCode())
	require.NotEmpty(t, refused.errorField("message_ar"))
	wait, _ := strconv.Atoi(refused.Header.Get("Retry-After"))
	require.True(t, wait > 3500 && wait <= 3600, "Retry-After %d", wait)
	require.Equal(t, 995, h.variantQuantity(s), "the refused order took no stock")

	// Another phone from the same network, up to the network's seven.
	require.Equal(t, http.StatusCreated, place("+201005550002").Status)
	require.Equal(t, http.StatusCreated, place("+201005550003").Status)
	require.Equal(t, http.StatusTooManyRequests, place("+201005550004").Status)

	// Another store counts its own orders.
	other := newShop(t, h, "perphone2", 10)
	cartID, token := h.openCart(other, 1, "")
	require.Equal(t, http.StatusCreated, h.buyer(other, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token).Status)
}

// The orders-per-network limit counts a checkout when it is admitted, not
// when it succeeds: 40 checkouts from one network at once place at most
// the network's 7 (counting after success let a burst race past it), and
// 30 from one phone the phone's 5; a checkout refused for another reason
// gives its count back.
func TestStorefrontOrderLimitsHoldUnderABurst(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontOrdersPerNetwork: 7, StorefrontRateLimitPerMinute: 10_000})
	s := newShop(t, h, "burst", 1000)
	carts, tokens := make([]string, 40), make([]string, 40)
	for i := range carts {
		carts[i], tokens[i] = h.openCart(s, 1, "")
	}
	statuses := burst(len(carts), func(i int) int {
		body := checkoutBody("cod")
		phone := fmt.Sprintf("+2010055510%02d", i) // a phone each: only the network limits
		body["customer"].(map[string]any)["phone"] = phone
		body["shipping_address"].(map[string]any)["phone"] = phone
		return h.buyer(s, "POST", "/carts/"+carts[i]+"/checkout", body, tokens[i]).Status
	})
	require.Equal(t, map[int]int{http.StatusCreated: 7, http.StatusTooManyRequests: 33}, statuses)
	require.Equal(t, 993, h.variantQuantity(s), "seven orders took stock")

	// The orders-per-phone limit holds the same way: 30 checkouts at once
	// giving one phone place its 5.
	p := newHarness(t, api.Config{StorefrontOrdersPerPhone: 5, StorefrontRateLimitPerMinute: 10_000})
	ps := newShop(t, p, "burstphone", 1000)
	for i := range 30 {
		carts[i], tokens[i] = p.openCart(ps, 1, "")
	}
	statuses = burst(30, func(i int) int {
		return p.buyer(ps, "POST", "/carts/"+carts[i]+"/checkout", checkoutBody("cod"), tokens[i]).Status
	})
	require.Equal(t, map[int]int{http.StatusCreated: 5, http.StatusTooManyRequests: 25}, statuses)
	require.Equal(t, 995, p.variantQuantity(ps), "five orders took stock")

	// A checkout refused for another reason gives its count back: with room
	// for one order, a refused checkout leaves the room to the next.
	one := newHarness(t, api.Config{StorefrontOrdersPerNetwork: 1})
	o := newShop(t, one, "burst1", 100)
	cartID, token := one.openCart(o, 20, "")
	require.Equal(t, http.StatusOK, one.settings(o, map[string]any{"max_line_quantity": 10}).Status)
	require.Equal(t, http.StatusUnprocessableEntity, one.buyer(o, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token).Status)
	cartID, token = one.openCart(o, 1, "")
	placed := one.buyer(o, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token)
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
}

// A buyer uploads at most five proofs for one order.
func TestProofLimitPerOrder(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "proofs", 10)
	cartID, token := h.openCart(s, 1, "")
	out := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("instapay"), token)
	require.Equal(t, http.StatusCreated, out.Status)
	orderID, orderToken := out.data()["order"].(map[string]any)["id"].(string), out.data()["order_token"].(string)
	for i := range 5 {
		require.Equal(t, http.StatusCreated, h.uploadProof(s, orderID, orderToken, photo(t, "coffee.jpg")).Status, "proof %d", i+1)
	}
	sixth := h.uploadProof(s, orderID, orderToken, photo(t, "coffee.jpg"))
	require.Equal(t, http.StatusConflict, sixth.Status, string(sixth.Raw))
	require.Equal(t, "PROOF_LIMIT_REACHED", sixth.errorCode())
	require.NotEmpty(t, sixth.errorField("message_ar"))
	var proofs int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM payment_proofs WHERE order_id = $1`, orderID).Scan(&proofs))
	require.Equal(t, 5, proofs)
}

// Automatic confirmations go to one email or phone once per interval per
// store: a buyer cannot make the store message someone over and over. The
// skipped one is recorded, and the merchant can still resend it.
func TestConfirmationsOncePerContact(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.contactInterval = 10 * time.Minute
	h.startWorker(nil)
	s := newShop(t, h, "confirm", 10)
	require.Equal(t, http.StatusOK, h.settings(s, map[string]any{"chat_confirmations": true,
		"chat_templates_approved": []string{"order_confirmation", "order_confirmation_request"}}).Status)
	var orders []string
	for range 2 {
		cartID, token := h.openCart(s, 1, "")
		out := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token)
		require.Equal(t, http.StatusCreated, out.Status)
		orders = append(orders, out.data()["order"].(map[string]any)["id"].(string))
	}
	for _, id := range orders {
		waitFor(t, "the order-placed workflow", func() bool { return len(h.sideEffects(id)) == 3 })
	}
	first, second := h.sideEffects(orders[0]), h.sideEffects(orders[1])
	sent := 0
	for _, fx := range []map[string]string{first, second} {
		if fx["email"] == "succeeded" {
			sent++
		}
	}
	require.Equal(t, 1, sent, "one email between them: %v %v", first, second)
	require.Len(t, h.messagesTo("salma@example.com"), 1)
	require.Len(t, h.chat.messages(), 1)

	// Another store's confirmation to the same buyer is its own.
	other := newShop(t, h, "confirm2", 10)
	cartID, token := h.openCart(other, 1, "")
	out := h.buyer(other, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token)
	id := out.data()["order"].(map[string]any)["id"].(string)
	waitFor(t, "the other store's workflow", func() bool { return h.sideEffects(id)["email"] == "succeeded" })
}

// Amounts stay within 0..10^12 minor units, and no order total overflows:
// 100 lines at the largest price are refused, not wrapped around.
func TestAmountBounds(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "amounts", 10)
	for _, body := range []map[string]any{{"name": "Gold", "price": 1_000_000_000_001}, {"name": "Gold", "price": 1, "cost_price": int64(1) << 62}} {
		r := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products"), auth: bearer(s.token), body: body,
			contractExempt: "the request breaks the documented maximum on purpose"})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Raw))
	}
	gold := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Gold", "price": 1_000_000_000_000})
	v := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+gold["id"].(string)+"/variants"), auth: bearer(s.token),
		body: map[string]any{"sku": "GOLD-1", "quantity": 10_000, "options": map[string]any{"size": "1kg"}}})
	require.Equal(t, http.StatusCreated, v.Status, string(v.Raw))
	over := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: orderBody(v.Body["id"].(string), 2, "+201001234567")})
	require.Equal(t, http.StatusUnprocessableEntity, over.Status, string(over.Raw))
	require.Equal(t, []string{"lines[0].quantity"}, over.fieldNames())
	exact := orderBody(v.Body["id"].(string), 1, "+201001234567")
	exact["shipping_fee"], exact["discount"] = 0, 0
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: exact}).Status, "exactly 10^12 is allowed")
	fee := orderBody(s.variantID, 1, "+201001234567")
	fee["shipping_fee"] = 1_000_000_000_000
	total := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: fee})
	require.Equal(t, http.StatusUnprocessableEntity, total.Status, string(total.Raw))
	require.Equal(t, []string{"lines"}, total.fieldNames())
}
