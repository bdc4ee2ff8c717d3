package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// buyerOrderLimits bound the storefront orders of one store per hour by
// phone number (shipping and customer phone alike) and by client network
// (an IPv4 address or IPv6 /64). A checkout counts from its admission and
// gives its count back when no order is placed, so only orders placed (and
// checkouts in flight) count; a checkout refused for another reason costs
// nothing.
type buyerOrderLimits struct {
	phones   *slidingLimiter
	networks *slidingLimiter
	network  func(r *http.Request) string // the client network a request comes from
}

func newBuyerOrderLimits(perPhone, perNetwork int, network func(r *http.Request) string) *buyerOrderLimits {
	if perPhone <= 0 {
		perPhone = 5
	}
	if perNetwork <= 0 {
		perNetwork = 10
	}
	return &buyerOrderLimits{
		phones:   newSlidingLimiter("storefront-orders-phone", perPhone, time.Hour),
		networks: newSlidingLimiter("storefront-orders-network", perNetwork, time.Hour),
		network:  network,
	}
}

// buyerOrderKeys are the limiter keys of one checkout: hashed, so the shared
// counts hold no phone number.
type buyerOrderKeys struct {
	phones  []string
	network string
}

func limitKey(storeID uuid.UUID, value string) string {
	sum := sha256.Sum256([]byte(storeID.String() + "|" + value))
	return hex.EncodeToString(sum[:16])
}

func (b *buyerOrderLimits) keys(storeID uuid.UUID, r *http.Request, phones ...*string) buyerOrderKeys {
	k := buyerOrderKeys{network: limitKey(storeID, b.network(r))}
	seen := map[string]bool{}
	for _, p := range phones {
		if p != nil && *p != "" && !seen[*p] {
			seen[*p] = true
			k.phones = append(k.phones, limitKey(storeID, *p))
		}
	}
	return k
}

// admit reserves one order for the network and each phone, or answers 429
// having reserved nothing. Counting on admission is what makes the limit
// hold under a burst: checkouts in flight hold their counts, so the eighth
// of forty parallel checkouts is refused before any of them commits. The
// caller gives the counts back (giveBack) unless the order is placed.
func (b *buyerOrderLimits) admit(k buyerOrderKeys) (giveBack func(), err error) {
	slots := []limitSlot{{b.networks, k.network}}
	for _, p := range k.phones {
		slots = append(slots, limitSlot{b.phones, p})
	}
	giveBack, wait, ok := reserveAll(slots...)
	if !ok {
		return nil, &apiError{Status: http.StatusTooManyRequests, Code: "RATE_LIMITED",
			Message:   "Too many orders from this phone number or network in the last hour; try again later",
			MessageAr: "طلبات كثيرة من رقم الهاتف أو الشبكة نفسها خلال الساعة الأخيرة؛ حاول لاحقًا",
			Header:    http.Header{"Retry-After": {retryAfterSeconds(wait)}}}
	}
	return giveBack, nil
}
