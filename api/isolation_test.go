package api_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// routeAccess is who may call a route: a token scope (or a member whose
// role holds it), "session" (any member signed in), "admin" (the owner or
// an admin, signed in), "owner" (the owner, signed in), "token-or-session"
// (any credential of the store), "public" (no credential; limited per
// client), "page" (a server-rendered page of a signed-in merchant) or
// "page " and what a store page needs: the scope its API twin requires, or
// "session" (any member of the store).
var routeAccess = map[string]string{
	"GET /media/{store_id}/{image_id}/{file}": "public",
	"GET /files/{store_id}/{media_id}/{name}": "public",
	"GET /login":                                                                              "public",
	"POST /login":                                                                             "public",
	"GET /oauth/authorize":                                                                    "page",
	"POST /oauth/authorize":                                                                   "page",
	"GET /apps/{slug}/install":                                                                "page",
	"GET /apps/{slug}/launch":                                                                 "page",
	"GET /stores/{store_id}/themes/editor":                                                    "page themes:read",
	"GET /stores/{store_id}/themes/preview":                                                   "page themes:read",
	"POST /stores/{store_id}/themes/preview/render":                                           "page themes:read",
	"GET /assets/editor/{file}":                                                               "public",
	"GET /assets/store/{file}":                                                                "public",
	"GET /assets/theme/{file}":                                                                "public",
	"GET /s/{subdomain}":                                                                      "public",
	"GET /s/{subdomain}/*":                                                                    "public",
	"GET /stores/{store_id}/imports":                                                          "page catalog:read",
	"GET /stores/{store_id}/deliveries":                                                       "page settings:read",
	"GET /stores/{store_id}/work":                                                             "page orders:read",
	"GET /stores/{store_id}/shipments":                                                        "page orders:read",
	"GET /stores/{store_id}/staff":                                                            "page session",
	"GET /stores/{store_id}/analytics":                                                        "page analytics:read",
	"GET /invitations":                                                                        "public",
	"GET /password-reset":                                                                     "public",
	"GET /verify-email":                                                                       "public",
	"GET /stores/{store_id}/shipments/print":                                                  "page orders:read",
	"GET /stores/{store_id}/orders/{order_id}/returns":                                        "page orders:read",
	"GET /healthz":                                                                            "public",
	"GET /metrics":                                                                            "public",
	"GET /readyz":                                                                             "public",
	"GET /api/v1/openapi.json":                                                                "public",
	"POST /api/v1/chat/callback":                                                              "public",
	"GET /api/v1/messaging/whatsapp/{channel_id}":                                             "public",
	"POST /api/v1/messaging/whatsapp/{channel_id}":                                            "public",
	"POST /api/v1/carrier-callbacks/{carrier_account_id}":                                     "public",
	"POST /api/v1/gateway-webhooks/{provider}/{store_id}":                                     "public",
	"POST /api/v1/oauth/token":                                                                "public",
	"POST /api/v1/oauth/revoke":                                                               "public",
	"POST /api/v1/apps/":                                                                      "session",
	"GET /api/v1/apps/":                                                                       "session",
	"POST /api/v1/apps/{app_id}/rotate-secret":                                                "session",
	"POST /api/v1/auth/signup":                                                                "public",
	"POST /api/v1/auth/login":                                                                 "public",
	"POST /api/v1/auth/logout":                                                                "session",
	"POST /api/v1/auth/logout-everywhere":                                                     "session",
	"POST /api/v1/auth/password":                                                              "session",
	"POST /api/v1/auth/password-reset":                                                        "public",
	"POST /api/v1/auth/password-reset/confirm":                                                "public",
	"POST /api/v1/auth/verify-email":                                                          "public",
	"GET /api/v1/auth/me":                                                                     "token-or-session",
	"GET /api/v1/auth/api-key/me":                                                             "token-or-session",
	"GET /api/v1/storefront/{subdomain}/products":                                             "public",
	"GET /api/v1/storefront/{subdomain}/shipping/areas":                                       "public",
	"GET /api/v1/storefront/{subdomain}/menus/{handle}":                                       "public",
	"GET /api/v1/storefront/{subdomain}/collections":                                          "public",
	"GET /api/v1/storefront/{subdomain}/collections/{handle}/products":                        "public",
	"GET /api/v1/storefront/{subdomain}/products/{product_id}":                                "public",
	"POST /api/v1/storefront/{subdomain}/carts":                                               "public",
	"GET /api/v1/storefront/{subdomain}/carts/{cart_id}":                                      "public",
	"PUT /api/v1/storefront/{subdomain}/carts/{cart_id}":                                      "public",
	"POST /api/v1/storefront/{subdomain}/carts/{cart_id}/checkout":                            "public",
	"POST /api/v1/storefront/{subdomain}/orders/{order_id}/payment-proofs":                    "public",
	"POST /api/v1/storefront/{subdomain}/orders/{order_id}/card-payment":                      "public",
	"GET /api/v1/storefront/{subdomain}/orders/{order_id}/invoice":                            "public",
	"POST /api/v1/stores/{store_id}/access-tokens/":                                           "admin",
	"GET /api/v1/stores/{store_id}/access-tokens/":                                            "admin",
	"DELETE /api/v1/stores/{store_id}/access-tokens/{token_id}":                               "admin",
	"GET /api/v1/stores/{store_id}/roles/":                                                    "session",
	"POST /api/v1/stores/{store_id}/roles/":                                                   "admin",
	"PATCH /api/v1/stores/{store_id}/roles/{role_id}":                                         "admin",
	"DELETE /api/v1/stores/{store_id}/roles/{role_id}":                                        "admin",
	"GET /api/v1/stores/{store_id}/staff/":                                                    "admin",
	"PATCH /api/v1/stores/{store_id}/staff/{user_id}":                                         "admin",
	"DELETE /api/v1/stores/{store_id}/staff/{user_id}":                                        "admin",
	"POST /api/v1/stores/{store_id}/staff/invitations":                                        "admin",
	"GET /api/v1/stores/{store_id}/staff/invitations":                                         "admin",
	"POST /api/v1/stores/{store_id}/staff/invitations/{invitation_id}/resend":                 "admin",
	"DELETE /api/v1/stores/{store_id}/staff/invitations/{invitation_id}":                      "admin",
	"POST /api/v1/staff-invitations/lookup":                                                   "public",
	"POST /api/v1/staff-invitations/accept":                                                   "public",
	"GET /api/v1/stores/{store_id}/notifications":                                             "session",
	"DELETE /api/v1/stores/{store_id}/apps/{app_id}":                                          "owner",
	"GET /api/v1/stores/{store_id}/audit-log":                                                 "owner",
	"GET /api/v1/stores/{store_id}/analytics/sales":                                           "analytics:read",
	"GET /api/v1/stores/{store_id}/analytics/top-products":                                    "analytics:read",
	"GET /api/v1/stores/{store_id}/settings":                                                  "settings:read",
	"PATCH /api/v1/stores/{store_id}/settings":                                                "settings:write",
	"GET /api/v1/stores/{store_id}/payment-gateways/":                                         "settings:read",
	"PUT /api/v1/stores/{store_id}/payment-gateways/{provider}":                               "admin",
	"DELETE /api/v1/stores/{store_id}/payment-gateways/{provider}":                            "admin",
	"GET /api/v1/stores/{store_id}/messaging/channels/":                                       "settings:read",
	"GET /api/v1/stores/{store_id}/messaging/channels/{channel}":                              "settings:read",
	"PUT /api/v1/stores/{store_id}/messaging/channels/{channel}":                              "settings:write",
	"DELETE /api/v1/stores/{store_id}/messaging/channels/{channel}":                           "settings:write",
	"POST /api/v1/stores/{store_id}/messaging/templates/":                                     "marketing:write",
	"GET /api/v1/stores/{store_id}/messaging/templates/":                                      "marketing:read",
	"GET /api/v1/stores/{store_id}/messaging/templates/{template_id}":                         "marketing:read",
	"DELETE /api/v1/stores/{store_id}/messaging/templates/{template_id}":                      "marketing:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/shipments":                              "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/shipments":                               "orders:read",
	"GET /api/v1/stores/{store_id}/shipments/":                                                "orders:read",
	"GET /api/v1/stores/{store_id}/shipments/{shipment_id}":                                   "orders:read",
	"PATCH /api/v1/stores/{store_id}/shipments/{shipment_id}":                                 "orders:write",
	"POST /api/v1/stores/{store_id}/shipments/{shipment_id}/events":                           "orders:write",
	"POST /api/v1/stores/{store_id}/shipments/{shipment_id}/cancel":                           "orders:write",
	"GET /api/v1/stores/{store_id}/shipments/{shipment_id}/waybill":                           "orders:read",
	"POST /api/v1/stores/{store_id}/shipments/{shipment_id}/waybill":                          "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/returns":                                 "orders:read",
	"POST /api/v1/stores/{store_id}/orders/preview":                                           "orders:read",
	"POST /api/v1/stores/{store_id}/shipping/quote":                                           "settings:read",
	"POST /api/v1/stores/{store_id}/shipping/zones/":                                          "settings:write",
	"GET /api/v1/stores/{store_id}/shipping/zones/":                                           "settings:read",
	"GET /api/v1/stores/{store_id}/shipping/zones/{zone_id}":                                  "settings:read",
	"PATCH /api/v1/stores/{store_id}/shipping/zones/{zone_id}":                                "settings:write",
	"DELETE /api/v1/stores/{store_id}/shipping/zones/{zone_id}":                               "settings:write",
	"POST /api/v1/stores/{store_id}/shipping/zones/{zone_id}/rates":                           "settings:write",
	"PATCH /api/v1/stores/{store_id}/shipping/zones/{zone_id}/rates/{rate_id}":                "settings:write",
	"DELETE /api/v1/stores/{store_id}/shipping/zones/{zone_id}/rates/{rate_id}":               "settings:write",
	"POST /api/v1/stores/{store_id}/discounts/":                                               "marketing:write",
	"GET /api/v1/stores/{store_id}/discounts/":                                                "marketing:read",
	"GET /api/v1/stores/{store_id}/discounts/{discount_id}":                                   "marketing:read",
	"PATCH /api/v1/stores/{store_id}/discounts/{discount_id}":                                 "marketing:write",
	"DELETE /api/v1/stores/{store_id}/discounts/{discount_id}":                                "marketing:write",
	"GET /api/v1/stores/{store_id}/discounts/{discount_id}/redemptions":                       "marketing:read",
	"GET /api/v1/stores/{store_id}/returns/":                                                  "orders:read",
	"GET /api/v1/stores/{store_id}/returns/{return_id}":                                       "orders:read",
	"POST /api/v1/stores/{store_id}/returns/{return_id}/receive":                              "orders:write",
	"POST /api/v1/stores/{store_id}/returns/{return_id}/approve":                              "orders:write",
	"POST /api/v1/stores/{store_id}/returns/{return_id}/decline":                              "orders:write",
	"POST /api/v1/stores/{store_id}/returns/{return_id}/cancel":                               "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/returns":                                "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/refunds":                                "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/refunds":                                 "orders:read",
	"GET /api/v1/stores/{store_id}/refunds/{refund_id}":                                       "orders:read",
	"POST /api/v1/stores/{store_id}/refunds/{refund_id}/settle":                               "orders:write",
	"GET /api/v1/stores/{store_id}/settings/tax":                                              "settings:read",
	"PUT /api/v1/stores/{store_id}/settings/tax":                                              "settings:write",
	"GET /api/v1/stores/{store_id}/invoices/":                                                 "orders:read",
	"GET /api/v1/stores/{store_id}/invoices/{invoice_id}":                                     "orders:read",
	"GET /api/v1/stores/{store_id}/invoices/{invoice_id}/pdf":                                 "orders:read",
	"GET /api/v1/stores/{store_id}/invoices/{invoice_id}/document":                            "orders:read",
	"POST /api/v1/stores/{store_id}/invoices/{invoice_id}/retry":                              "orders:write",
	"POST /api/v1/stores/{store_id}/cod-remittances/":                                         "orders:write",
	"GET /api/v1/stores/{store_id}/cod-remittances/":                                          "orders:read",
	"GET /api/v1/stores/{store_id}/cod-remittances/{remittance_id}":                           "orders:read",
	"POST /api/v1/stores/{store_id}/carrier-accounts/":                                        "settings:write",
	"GET /api/v1/stores/{store_id}/carrier-accounts/":                                         "settings:read",
	"GET /api/v1/stores/{store_id}/carrier-accounts/{carrier_account_id}":                     "settings:read",
	"DELETE /api/v1/stores/{store_id}/carrier-accounts/{carrier_account_id}":                  "settings:write",
	"POST /api/v1/stores/{store_id}/carrier-accounts/{carrier_account_id}/rotate-secret":      "settings:write",
	"POST /api/v1/stores/{store_id}/locations/":                                               "settings:write",
	"GET /api/v1/stores/{store_id}/locations/":                                                "settings:read",
	"GET /api/v1/stores/{store_id}/locations/{location_id}":                                   "settings:read",
	"PATCH /api/v1/stores/{store_id}/locations/{location_id}":                                 "settings:write",
	"DELETE /api/v1/stores/{store_id}/locations/{location_id}":                                "settings:write",
	"GET /api/v1/stores/{store_id}/inventory/levels":                                          "catalog:read",
	"POST /api/v1/stores/{store_id}/inventory/adjustments":                                    "catalog:write",
	"GET /api/v1/stores/{store_id}/inventory/movements":                                       "catalog:read",
	"POST /api/v1/stores/{store_id}/webhooks/":                                                "settings:write",
	"GET /api/v1/stores/{store_id}/webhooks/":                                                 "settings:read",
	"GET /api/v1/stores/{store_id}/webhooks/{webhook_id}":                                     "settings:read",
	"PATCH /api/v1/stores/{store_id}/webhooks/{webhook_id}":                                   "settings:write",
	"DELETE /api/v1/stores/{store_id}/webhooks/{webhook_id}":                                  "settings:write",
	"POST /api/v1/stores/{store_id}/webhooks/{webhook_id}/test":                               "settings:write",
	"POST /api/v1/stores/{store_id}/webhooks/{webhook_id}/rotate-secret":                      "settings:write",
	"GET /api/v1/stores/{store_id}/webhooks/{webhook_id}/logs":                                "settings:read",
	"POST /api/v1/stores/{store_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": "settings:write",
	"POST /api/v1/stores/{store_id}/webhooks/{webhook_id}/recover":                            "settings:write",
	"POST /api/v1/stores/{store_id}/customers/":                                               "customers:write",
	"GET /api/v1/stores/{store_id}/customers/":                                                "customers:read",
	"GET /api/v1/stores/{store_id}/customers/{customer_id}":                                   "customers:read",
	"PATCH /api/v1/stores/{store_id}/customers/{customer_id}":                                 "customers:write",
	"DELETE /api/v1/stores/{store_id}/customers/{customer_id}":                                "customers:write",
	"POST /api/v1/stores/{store_id}/customers/{customer_id}/merge":                            "customers:write",
	"GET /api/v1/stores/{store_id}/customers/{customer_id}/export":                            "customers:read",
	"POST /api/v1/stores/{store_id}/customers/{customer_id}/erase":                            "customers:write",
	"POST /api/v1/stores/{store_id}/orders/":                                                  "orders:write",
	"POST /api/v1/stores/{store_id}/orders/drafts":                                            "orders:write",
	"GET /api/v1/stores/{store_id}/orders/":                                                   "orders:read",
	"GET /api/v1/stores/{store_id}/orders/counts":                                             "orders:read",
	"GET /api/v1/stores/{store_id}/orders/pending-manual-review":                              "orders:read",
	"GET /api/v1/stores/{store_id}/orders/autopilot-exceptions":                               "orders:read",
	"POST /api/v1/stores/{store_id}/orders/autopilot-exceptions/{order_id}/resolve":           "orders:write",
	"POST /api/v1/stores/{store_id}/orders/bulk-status":                                       "orders:write",
	"PATCH /api/v1/stores/{store_id}/orders/{order_id}":                                       "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/convert":                                "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/email-preview":                           "orders:read",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/resend-email":                           "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/chat-messages":                           "orders:read",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/resend-chat-message":                    "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}":                                         "orders:read",
	"DELETE /api/v1/stores/{store_id}/orders/{order_id}":                                      "orders:write",
	"PATCH /api/v1/stores/{store_id}/orders/{order_id}/status":                                "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/timeline":                                "orders:read",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/activities":                              "orders:read",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/comments":                               "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/mark-paid":                              "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/unmark-paid":                            "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/partial-acceptance":                     "orders:write",
	"POST /api/v1/stores/{store_id}/orders/{order_id}/payments":                               "orders:write",
	"GET /api/v1/stores/{store_id}/orders/{order_id}/payment-proofs":                          "orders:read",
	"GET /api/v1/stores/{store_id}/abandoned-checkouts/summary":                               "orders:read",
	"GET /api/v1/stores/{store_id}/abandoned-checkouts/":                                      "orders:read",
	"GET /api/v1/stores/{store_id}/abandoned-checkouts/{checkout_id}":                         "orders:read",
	"POST /api/v1/stores/{store_id}/abandoned-checkouts/{checkout_id}/send-recovery-email":    "orders:write",
	"POST /api/v1/stores/{store_id}/abandoned-checkouts/{checkout_id}/mark-recovered":         "orders:write",
	"GET /api/v1/stores/{store_id}/payment-proofs/{proof_id}/image":                           "settings:read",
	"GET /api/v1/stores/{store_id}/payment-proofs/{proof_id}/similar":                         "settings:read",
	"POST /api/v1/stores/{store_id}/payment-proofs/{proof_id}/approve":                        "settings:write",
	"POST /api/v1/stores/{store_id}/payment-proofs/{proof_id}/reject":                         "settings:write",
	"POST /api/v1/stores/{store_id}/payments/{proof_id}/void":                                 "settings:write",
	"GET /api/v1/stores/{store_id}/themes/v3/customization":                                   "themes:read",
	"POST /api/v1/stores/{store_id}/themes/v3/customization/switch":                           "themes:write",
	"GET /api/v1/stores/{store_id}/themes":                                                    "themes:read",
	"PUT /api/v1/stores/{store_id}/themes/v3/customization":                                   "themes:write",
	"POST /api/v1/stores/{store_id}/themes/v3/customization/publish":                          "themes:write",
	"GET /api/v1/stores/{store_id}/themes/v3/versions":                                        "themes:read",
	"GET /api/v1/stores/{store_id}/themes/v3/versions/compare":                                "themes:read",
	"GET /api/v1/stores/{store_id}/themes/v3/versions/{version_id}":                           "themes:read",
	"POST /api/v1/stores/{store_id}/themes/v3/versions/{version_id}/restore":                  "themes:write",
	"GET /api/v1/stores/{store_id}/themes/v3/schemas":                                         "themes:read",
	"POST /api/v1/stores/{store_id}/menus/":                                                   "themes:write",
	"GET /api/v1/stores/{store_id}/menus/":                                                    "themes:read",
	"GET /api/v1/stores/{store_id}/menus/{menu_id}":                                           "themes:read",
	"PATCH /api/v1/stores/{store_id}/menus/{menu_id}":                                         "themes:write",
	"DELETE /api/v1/stores/{store_id}/menus/{menu_id}":                                        "themes:write",
	"POST /api/v1/stores/{store_id}/redirects/":                                               "themes:write",
	"GET /api/v1/stores/{store_id}/redirects/":                                                "themes:read",
	"GET /api/v1/stores/{store_id}/redirects/{redirect_id}":                                   "themes:read",
	"DELETE /api/v1/stores/{store_id}/redirects/{redirect_id}":                                "themes:write",
	"POST /api/v1/stores/{store_id}/pages/":                                                   "themes:write",
	"GET /api/v1/stores/{store_id}/pages/":                                                    "themes:read",
	"GET /api/v1/stores/{store_id}/pages/{page_id}":                                           "themes:read",
	"PATCH /api/v1/stores/{store_id}/pages/{page_id}":                                         "themes:write",
	"DELETE /api/v1/stores/{store_id}/pages/{page_id}":                                        "themes:write",
	"POST /api/v1/stores/{store_id}/blogs/":                                                   "themes:write",
	"GET /api/v1/stores/{store_id}/blogs/":                                                    "themes:read",
	"GET /api/v1/stores/{store_id}/blogs/{blog_id}":                                           "themes:read",
	"PATCH /api/v1/stores/{store_id}/blogs/{blog_id}":                                         "themes:write",
	"DELETE /api/v1/stores/{store_id}/blogs/{blog_id}":                                        "themes:write",
	"POST /api/v1/stores/{store_id}/blogs/{blog_id}/articles":                                 "themes:write",
	"GET /api/v1/stores/{store_id}/blogs/{blog_id}/articles":                                  "themes:read",
	"GET /api/v1/stores/{store_id}/blogs/{blog_id}/articles/{article_id}":                     "themes:read",
	"PATCH /api/v1/stores/{store_id}/blogs/{blog_id}/articles/{article_id}":                   "themes:write",
	"DELETE /api/v1/stores/{store_id}/blogs/{blog_id}/articles/{article_id}":                  "themes:write",
	"GET /api/v1/storefront/{subdomain}/pages/{handle}":                                       "public",
	"GET /api/v1/storefront/{subdomain}/blogs/{handle}/articles":                              "public",
	"GET /api/v1/storefront/{subdomain}/blogs/{handle}/articles/{article_handle}":             "public",
	"POST /api/v1/stores/{store_id}/products/":                                                "catalog:write",
	"GET /api/v1/stores/{store_id}/products/":                                                 "catalog:read",
	"GET /api/v1/stores/{store_id}/products/template":                                         "catalog:read",
	"GET /api/v1/stores/{store_id}/products/export":                                           "catalog:read",
	"POST /api/v1/stores/{store_id}/products/import":                                          "catalog:write",
	"GET /api/v1/stores/{store_id}/products/imports/{import_id}":                              "catalog:read",
	"GET /api/v1/stores/{store_id}/products/imports/{import_id}/events":                       "catalog:read",
	"GET /api/v1/stores/{store_id}/products/imports/{import_id}/errors":                       "catalog:read",
	"GET /api/v1/stores/{store_id}/products/{product_id}":                                     "catalog:read",
	"PATCH /api/v1/stores/{store_id}/products/{product_id}":                                   "catalog:write",
	"DELETE /api/v1/stores/{store_id}/products/{product_id}":                                  "catalog:write",
	"POST /api/v1/stores/{store_id}/media/":                                                   "media:write",
	"GET /api/v1/stores/{store_id}/media/":                                                    "media:read",
	"GET /api/v1/stores/{store_id}/media/{media_id}":                                          "media:read",
	"PATCH /api/v1/stores/{store_id}/media/{media_id}":                                        "media:write",
	"DELETE /api/v1/stores/{store_id}/media/{media_id}":                                       "media:write",
	"POST /api/v1/stores/{store_id}/products/{product_id}/images":                             "catalog:write",
	"DELETE /api/v1/stores/{store_id}/products/{product_id}/images":                           "catalog:write",
	"PATCH /api/v1/stores/{store_id}/products/{product_id}/images/alt":                        "catalog:write",
	"GET /api/v1/stores/{store_id}/products/{product_id}/images/{image_id}":                   "catalog:read",
	"GET /api/v1/stores/{store_id}/products/{product_id}/variants":                            "catalog:read",
	"POST /api/v1/stores/{store_id}/products/{product_id}/variants":                           "catalog:write",
	"PATCH /api/v1/stores/{store_id}/products/{product_id}/variants/{variant_id}":             "catalog:write",
	"DELETE /api/v1/stores/{store_id}/products/{product_id}/variants/{variant_id}":            "catalog:write",
	"POST /api/v1/stores/{store_id}/categories/":                                              "catalog:write",
	"GET /api/v1/stores/{store_id}/categories/":                                               "catalog:read",
	"GET /api/v1/stores/{store_id}/categories/{category_id}":                                  "catalog:read",
	"PATCH /api/v1/stores/{store_id}/categories/{category_id}":                                "catalog:write",
	"DELETE /api/v1/stores/{store_id}/categories/{category_id}":                               "catalog:write",
	"POST /api/v1/stores/{store_id}/collections/":                                             "catalog:write",
	"GET /api/v1/stores/{store_id}/collections/":                                              "catalog:read",
	"GET /api/v1/stores/{store_id}/collections/{collection_id}":                               "catalog:read",
	"PATCH /api/v1/stores/{store_id}/collections/{collection_id}":                             "catalog:write",
	"DELETE /api/v1/stores/{store_id}/collections/{collection_id}":                            "catalog:write",
	"GET /api/v1/stores/{store_id}/collections/{collection_id}/products":                      "catalog:read",
	"POST /api/v1/stores/{store_id}/collections/{collection_id}/products":                     "catalog:write",
	"DELETE /api/v1/stores/{store_id}/collections/{collection_id}/products":                   "catalog:write",
	"PUT /api/v1/stores/{store_id}/collections/{collection_id}/products/order":                "catalog:write",
	"POST /api/v1/stores/{store_id}/gift-cards/":                                              "orders:write",
	"GET /api/v1/stores/{store_id}/gift-cards/":                                               "orders:read",
	"GET /api/v1/stores/{store_id}/gift-cards/{gift_card_id}":                                 "orders:read",
	"PATCH /api/v1/stores/{store_id}/gift-cards/{gift_card_id}":                               "orders:write",
	"POST /api/v1/stores/{store_id}/gift-cards/{gift_card_id}/adjustments":                    "orders:write",
	"POST /api/v1/stores/{store_id}/gift-cards/{gift_card_id}/disable":                        "orders:write",
	"POST /api/v1/stores/{store_id}/gift-cards/{gift_card_id}/send":                           "orders:write",
	"POST /api/v1/storefront/{subdomain}/gift-cards/balance":                                  "public",
	"POST /api/v1/storefront/{subdomain}/customer-auth/start":                                 "public",
	"POST /api/v1/storefront/{subdomain}/customer-auth/verify":                                "public",
	"POST /api/v1/storefront/{subdomain}/customer-auth/logout":                                "public",
	"GET /api/v1/storefront/{subdomain}/account":                                              "public",
	"PATCH /api/v1/storefront/{subdomain}/account":                                            "public",
	"GET /api/v1/storefront/{subdomain}/account/orders":                                       "public",
	"GET /api/v1/storefront/{subdomain}/account/orders/{order_number}":                        "public",
}

// The isolation and authorization matrix: every route of the router, called
// on store A's resources with store B's token, with an app token of A
// without the route's scope, with a revoked token of A and with no
// credential, answers its refusal and shows nothing of store A. Every store
// page, opened by each member of store A, answers 200 when the member's role
// holds the page's scope and otherwise the problem page with 403 and none of
// A's data. A route missing from routeAccess fails the test.
func TestIsolationMatrix(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil) // the invitation's mail
	a, b := h.signup("matrixa"), h.signup("matrixb")
	tokenA, tokenB := h.pat(a, allScopes...), h.pat(b, allScopes...)
	const secretName = "Matrix A secret product"
	product := h.createProduct(tokenA, a.storeID, map[string]any{"name": secretName, "price": 100, "sku": "MATRIX-A-1"})
	productID := product["id"].(string)

	minted := h.do(request{method: "POST", path: storePath(a.storeID, "/access-tokens"), auth: a.auth(),
		body: map[string]any{"name": "to revoke", "scopes": allScopes}})
	require.Equal(t, http.StatusCreated, minted.Status, string(minted.Raw))
	revoked := minted.data()["token"].(string)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(a.storeID, "/access-tokens/"+minted.data()["id"].(string)),
		auth: a.auth()}).Status)
	// An app of store A granted only risk:read, which no route needs.
	dev := h.signup("matrixdev")
	app := h.registerApp(dev, "matrix-app", map[string]any{"oauth": map[string]any{"scopes": []string{"risk:read"},
		"redirect_urls": []string{"https://app.example.com/oauth/callback"}}})
	br := h.newBrowser()
	br.signIn(a.email)
	q := br.allow(app, a.storeID, "risk:read", "m", "allow")
	appToken := h.exchange(app, q.Get("code"), nil).data()["access_token"].(string)

	// Members of store A: an admin, a custom role of two scopes and one of
	// orders:read alone.
	for name, scopes := range map[string][]string{"Clerk": {"catalog:read", "orders:write"}, "Packer": {"orders:read"}} {
		custom := h.do(request{method: "POST", path: storePath(a.storeID, "/roles"), auth: a.auth(),
			body: map[string]any{"name": name, "scopes": scopes}})
		require.Equal(t, http.StatusCreated, custom.Status, string(custom.Raw))
	}
	members := []struct {
		role   string
		scopes []string
		m      merchant
	}{{role: "admin"}, {role: "Clerk", scopes: []string{"catalog:read", "orders:write"}}, {role: "Packer", scopes: []string{"orders:read"}}}
	for i := range members {
		members[i].m = h.signup("matrixmember")
		h.exec(`INSERT INTO store_members (store_id, user_id, role_id, joined_at)
			SELECT $1, s.owner_user_id, r.id, now() FROM stores s, roles r WHERE s.id = $2 AND r.store_id = $1 AND (r.built_in = $3 OR r.name = $3)`,
			a.storeID, members[i].m.storeID, members[i].role)
	}
	// A catalogue clerk, invited and accepted as a new account, whose role
	// holds catalog:read alone: it may open the imports page and no other
	// page that needs a scope.
	cataloguer := h.do(request{method: "POST", path: storePath(a.storeID, "/roles"), auth: a.auth(),
		body: map[string]any{"name": "Cataloguer", "scopes": []string{"catalog:read"}}})
	require.Equal(t, http.StatusCreated, cataloguer.Status, string(cataloguer.Raw))
	members = append(members, struct {
		role   string
		scopes []string
		m      merchant
	}{role: "Cataloguer", scopes: []string{"catalog:read"},
		m: h.join(a, fmt.Sprintf("cataloguer-%d@example.com", rand.Uint32()), cataloguer.data()["id"].(string))})

	// An order of store A whose consignee a page without its scope must not show.
	variant := h.do(request{method: "POST", path: storePath(a.storeID, "/products/"+productID+"/variants"), auth: bearer(tokenA),
		body: map[string]any{"sku": "MATRIX-A-M", "quantity": 5, "options": map[string]any{"size": "M"}}})
	require.Equal(t, http.StatusCreated, variant.Status, string(variant.Raw))
	const consigneePhone = "+201055501234"
	order := h.do(request{method: "POST", path: storePath(a.storeID, "/orders"), auth: bearer(tokenA),
		body: orderBody(variant.Body["id"].(string), 1, consigneePhone)})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	orderID := order.data()["id"].(string)
	draft := h.do(request{method: "GET", path: storePath(a.storeID, "/themes/v3/customization"), auth: bearer(tokenA)})
	require.Equal(t, http.StatusOK, draft.Status, string(draft.Raw))

	routes, err := h.server.Routes()
	require.NoError(t, err)
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	seen, checked, pagesRefused := map[string]bool{}, 0, map[string]bool{}
	for _, rt := range routes {
		name := rt[0] + " " + rt[1]
		access, listed := routeAccess[name]
		require.True(t, listed, "route %s is not in the isolation matrix (routeAccess)", name)
		seen[name] = true
		if page, ok := strings.CutPrefix(access, "page "); ok {
			// A store page, opened by each member of store A.
			path := strings.NewReplacer("{store_id}", a.storeID, "{order_id}", orderID).Replace(rt[1])
			var body any
			if rt[0] == http.MethodPost { // the preview's render of the draft
				body = map[string]any{"document": draft.data()["draft"], "page": "index"}
			}
			for _, who := range members {
				resp := h.do(request{method: rt[0], path: path, auth: who.m.auth(), body: body})
				if allowed, _ := roleAllows(who.role, who.scopes, page); allowed {
					require.Equal(t, http.StatusOK, resp.Status, "%s as %s: %s", name, who.role, resp.Raw)
					continue
				}
				require.Equal(t, http.StatusForbidden, resp.Status, "%s as %s: %s", name, who.role, resp.Raw)
				require.Contains(t, string(resp.Raw), "دورك في هذا المتجر لا يملك الصلاحية", "%s as %s: the problem page, in Arabic", name, who.role)
				require.Contains(t, string(resp.Raw), page, "%s as %s names the scope", name, who.role)
				for _, secret := range []string{secretName, consigneePhone, "Mona Adel", orderID} {
					require.NotContains(t, string(resp.Raw), secret, "%s as %s shows store A's data", name, who.role)
				}
				pagesRefused[name] = true
			}
			continue
		}
		if access == "public" || access == "page" {
			continue // no credential to test; the storefront and the other pages have their own tests
		}
		path := strings.Replace(rt[1], "{store_id}", a.storeID, 1)
		path = param.ReplaceAllString(path, productID)
		call := func(cred auth) response {
			return h.do(request{method: rt[0], path: path, auth: cred, body: map[string]any{},
				contractExempt: "the matrix sends an empty body to every route"})
		}
		expect := func(who string, cred auth, status int, codes ...string) {
			t.Helper()
			resp := call(cred)
			require.Equal(t, status, resp.Status, "%s with %s: %s", name, who, resp.Raw)
			require.Contains(t, codes, resp.errorCode(), "%s with %s", name, who)
			require.NotContains(t, string(resp.Raw), secretName, "%s with %s shows store A", name, who)
			require.NotContains(t, string(resp.Raw), a.email, "%s with %s shows store A", name, who)
		}
		checked++
		expect("no credential", auth{}, http.StatusUnauthorized, "UNAUTHENTICATED")
		expect("a revoked token", bearer(revoked), http.StatusUnauthorized, "UNAUTHENTICATED")
		if !strings.Contains(rt[1], "{store_id}") {
			continue
		}
		expect("store B's token", bearer(tokenB), http.StatusForbidden, "STORE_MISMATCH")
		expect("store B's session", b.auth(), http.StatusForbidden, "STORE_MISMATCH")
		switch access {
		case "session", "admin", "owner":
			expect("an app token", bearer(appToken), http.StatusForbidden, "TOKEN_NOT_ALLOWED")
		default:
			expect("an app token without "+access, bearer(appToken), http.StatusForbidden, "SCOPE_MISSING")
		}
		// Each role of store A: what it allows answers past the gate (the
		// ids are unknown, so nothing of A changes); the rest is 403.
		nowhere := param.ReplaceAllString(strings.Replace(rt[1], "{store_id}", a.storeID, 1), "0190d3c4-0000-7000-8000-00000000abcd")
		for _, who := range members {
			resp := h.do(request{method: rt[0], path: nowhere, auth: who.m.auth(), body: map[string]any{},
				contractExempt: "the matrix sends an empty body to every route"})
			allowed, code := roleAllows(who.role, who.scopes, access)
			if allowed {
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, resp.Status, "%s as %s: %s", name, who.role, resp.Raw)
			} else {
				require.Equal(t, http.StatusForbidden, resp.Status, "%s as %s: %s", name, who.role, resp.Raw)
				require.Equal(t, code, resp.errorCode(), "%s as %s", name, who.role)
			}
		}
	}
	require.GreaterOrEqual(t, checked, 90, "credentialed routes walked")
	for name, access := range routeAccess {
		if strings.HasPrefix(access, "page ") && access != "page session" {
			require.True(t, pagesRefused[name], "no member of the matrix lacks the scope of %s", name)
		}
	}
	for name := range routeAccess {
		require.True(t, seen[name], "routeAccess lists %s, which the router does not serve", name)
	}
	// A's own credentials still work and A's data is whole.
	require.Equal(t, secretName, h.do(request{method: "GET", path: storePath(a.storeID, "/products/"+productID), auth: bearer(tokenA)}).data()["name"])
}

// roleAllows is what a member of role (admin, or a custom role of scopes)
// may call, and the refusal's code otherwise.
func roleAllows(role string, scopes []string, access string) (bool, string) {
	switch access {
	case "session", "token-or-session":
		return true, ""
	case "admin":
		return role == "admin", "ROLE_NOT_ALLOWED"
	case "owner":
		return false, "ROLE_NOT_ALLOWED"
	}
	if role == "admin" {
		return true, ""
	}
	domain, level, _ := strings.Cut(access, ":")
	return slices.Contains(scopes, access) || (level == "read" && slices.Contains(scopes, domain+":write")), "SCOPE_MISSING"
}
