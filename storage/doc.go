// Package storage is the domain: records, the rules that keep them consistent
// (the order, shipment and return state machines, stock, payment arithmetic),
// transactions, and Postgres access with squirrel and pgx.
//
// It is one package with one *Tx on purpose: placing an order (CreateOrder)
// reaches into the stock, discount, customer, pricing, shipping-rate, timeline
// and outbox files in one transaction, and packages per domain would import
// each other. Its files are grouped by a domain prefix instead, as gitea's
// models/ were: a domain's main record is in <prefix>.go where the prefix
// names it (order.go, refund.go), the rest in <prefix>_<topic>.go. Test files
// are named the same way. The fuzz targets live beside the code they fuzz, in
// the subpackages (storage/catalogcsv, storage/orderref, storage/theme,
// storage/handle; the Makefile's FUZZ_TARGETS lists them). This comment is the
// map; start here.
//
// # Domains
//
// Each entry names the files, then the main entry points. Lower-case names
// are the routines other domains call inside their transaction.
//
//   - store_: store.go (Store, FindStoreByID, FindStoreBySubdomain,
//     FindStoresByOwner); store_settings.go (StoreSettings, FindStoreSettings,
//     UpdateStoreSettings, DefaultTimezone); store_notifications.go
//     (CreateNotification, FindNotifications).
//   - staff_: staff_accounts.go (users, sessions and tokens: CreateUserAndStore,
//     FindUserByEmail, CreateSession, FindSession, CreateToken,
//     FindTokenBySecret, RevokeToken, NewSecret, HashSecret, SetPassword,
//     EndSessions); staff.go (roles, members and invitations: FindMembership,
//     CreateRole, ChangeMemberRole, RemoveMember, CreateInvitation,
//     AcceptInvitation); staff_recovery.go (an account's own mails and links:
//     RequestAccountMail, FindAccountMailsDue, MintAccountMailToken,
//     UseAccountLink); staff_lockout.go (the networks each account signed in
//     from, and a locked account's notice: SignInNetwork, NoteSignInLock).
//   - app_: app.go (partner apps and OAuth: CreateApp, BurnAuthCode, InstallApp,
//     UninstallApp, RevokeAppToken).
//   - audit_: audit.go (RecordAudit, WithCommitHook, FindAuditEntries).
//   - catalog_: catalog.go (products: CreateProduct, UpdateProduct,
//     DeleteProduct, FindProducts; Field, the absent-or-null of a PATCH);
//     catalog_variants.go (CreateVariant, UpdateVariant, DeleteVariant,
//     lockProduct); catalog_categories.go (CreateCategory, UpdateCategory);
//     catalog_images.go (CreateProductImage, AttachProductImage,
//     FindProcessingImages); catalog_imports.go (CreateImport, ApplyImportBatch,
//     FinishImport, ExportProducts, FindRecentImports); catalog_csv.go (the
//     names storage's callers use of storage/catalogcsv, where the CSV
//     format lives with no Postgres: ReadCSV, ParseCSVHeader, SplitImport,
//     FormatPrice).
//   - stock_: stock.go (levels, movements and reservations: lockVariants,
//     lockLevels, reserveOrder, queueReservation, moveOrderStock, Adjust,
//     FindLevels, FindMovements); stock_locations.go (CreateLocation,
//     UpdateLocation, DeleteLocation).
//   - checkout_: checkout_carts.go (the storefront's carts and their checkout:
//     CreateCart, UpdateCart, PriceCart, CheckoutCart, which places through
//     CreateOrder; abandoned checkouts: MarkCartsAbandoned, SweepAbandonedCarts,
//     FindAbandonedCheckouts, MarkCheckoutRecovered).
//   - order_: order.go (Order, CreateOrder, FindOrders, CountOrders,
//     FindOrderByRef, UpdateOrder); order_status.go (the status machine:
//     AllowedNext, CanMove, TransitionOrder, CancelOrder, stockForStatus, and
//     moveOrder, the one transition routine); order_pricing.go (Price, the pure
//     pricing of lines, discounts and shipping, and priceOrder, which feeds it
//     from Postgres); order_acceptance.go (AcceptPartially, AcceptedValue;
//     moveShipmentsStock, an order's stock moved shipment by shipment);
//     order_drafts.go (ConvertDraft); order_settlement.go (an order and its
//     shipments settling each other: settleOrderShipments, reconcileCOD,
//     returnOrder, closeShipments); order_activities.go (the timeline:
//     addActivity, AddOrderComment, FindOrderActivities); order_exceptions.go
//     (FlagOrder, FindAutopilotExceptions, ResolveAutopilotExceptions);
//     order_placed.go (the order-placed workflow's start and its side effects'
//     reads and records: FindOrdersAwaitingPlacement, MarkPlacementsStarted,
//     FindOrderSideEffectsStart, RecordSideEffect); order_tokens.go
//     (IssueOrderToken, OrderTokenValid).
//   - discount_: discount.go (CreateDiscount, UpdateDiscount, FindDiscounts,
//     FindRedemptions, NormalizeDiscountCode; countDiscounts, releaseDiscounts
//     and recheckDiscounts, which placing, cancelling and converting call).
//   - giftcard.go: gift cards and store credit (CreateGiftCard, FindGiftCards,
//     FindGiftCardByCode, AdjustGiftCard, DisableGiftCard, RecordGiftCardSend;
//     DebitGiftCard and CreditGiftCard, the ledger moves checkout, cancel and
//     refunds call in their own transactions).
//   - customer_: customer.go (CreateCustomer, UpdateCustomer,
//     FindOrCreateCustomer); customer_codrisk.go (a phone's cash-on-delivery
//     record across stores: CODRisk, codRisk, trustCheck, flagCODRisk).
//   - pay_: pay_payments.go (an order's payment arithmetic: PaymentStatusFor,
//     Commission, credit, settlePayment; MarkOrderPaid, PayThroughGateway,
//     UnmarkOrderPaid); pay_proofs.go (CreatePaymentProof, RecordPayment,
//     ApproveProof, RejectProof, VoidPayment); pay_proofsearch.go (NearProofs,
//     FindSimilarProofs, RecordProofHash); pay_cards.go (OpenCardPayment,
//     SettleCardPayment, ExpireCardPayment, CloseCancelledCardPayment);
//     pay_gateways.go (Sealer, ConnectGateway, FindGatewayAccount,
//     ResealSecrets); pay_remittances.go (RecordRemittance: a carrier paying out
//     the cash it collected).
//   - refund_: refund.go (CreateRefund, SettleRefund, RecordGatewayRefund,
//     RefundAmount, FindRefundable, refundedSoFar); refund_returns.go (the
//     return status machine ReturnAllowedNext; RequestReturn, ReceiveReturn,
//     MoveReturn, openRefusedReturn).
//   - ship_: ship_shipments.go (CreateShipment, CreateShipmentForOrder,
//     UpdateShipment, ReportShipmentStatus, CancelShipment, applyShipmentStatus,
//     lockShipment); ship_status.go (the shipment status machine:
//     ShipmentAllowedNext, ShipmentCanMove); ship_carriers.go (carrier accounts
//     and their reports: CreateCarrierAccount, CallbackSecrets,
//     ApplyCarrierEvents); ship_waybills.go (RequestWaybill, FindWaybillDocument,
//     MarkWaybillReady); ship_rates.go (zones and rates: CreateZone, CreateRate,
//     RateOptions, MatchZone, WeighItems, chooseShipping).
//   - webhook_: webhook.go (subscriptions: CreateSubscription,
//     UpdateSubscription, EventReadScope, EventsReadable); webhook_deliveries.go (DispatchOutbox,
//     FindBatchTargets, RecordAttempts, RequeueDeliveries, FindRecentDeliveries).
//   - analytics_: analytics.go (FindSalesFigures, RecomputeSalesFigures,
//     FindTopProducts).
//   - chat_: chat.go (CreateChatMessage, ApplyChatStatus, ConfirmByChat; the
//     side effects' contact claims: ClaimContactSend, BeginSideEffects).
//   - invoice_: invoice.go (FindInvoices, FindInvoice, issueInvoice and
//     correctInvoice, which the payment, refund, acceptance and cancel
//     transactions call; FindInvoicesAwaitingSync, RecordInvoiceReported),
//     invoice_words.go (AmountInWords).
//   - theme_: theme.go (FindCustomization, SaveDraft, PublishDraft,
//     RestoreThemeVersion, SwitchTheme); the document's own rules and the
//     built-in themes' files are storage/theme's.
//   - site_: site.go, the rendered storefront's reads (decisions §23):
//     FindSiteState (the store and its page-cache key, whose content version
//     migration 0067's triggers move), FindActiveProductByHandle,
//     FindFromPrices, FindPublishedCollectionByHandle, FindSitemap.
//   - content_: the online store's content (decisions §22): content_menus.go
//     (CreateMenu, UpdateMenu under If-Match, DeleteMenu, FindStorefrontMenu for the
//     storefront, RemoveMenuItemsTargeting for deletes of what items name,
//     refuseThemeUses for what the theme names), content_redirects.go
//     (CreateRedirect collapsing chains, RedirectFor).
//
// The platform's plumbing keeps plain names: storage.go (Open, DB, Tx, reader,
// InTx, savepoint, the sentinel errors), outbox.go (emit, queueEmit, the event
// names), idempotency.go (ClaimIdempotencyKey, CompleteIdempotencyKey, and
// PurgeExpired, which also purges sessions, authorization codes, audit
// entries, webhook deliveries and outbox events past their time),
// ratelimits.go (SyncRateCounts), starts.go (FindLostStarts and
// the Mark…Started of workflow starts lost after a commit), pages.go (Page,
// findPage), money.go (MaxAmount, checked sums), tracecontext.go, uuidparams.go
// and redact.go (Redacted: errors without Postgres's row data).
//
// # Transactions
//
// A change a request makes is a method on *Tx. The API runs it inside
// DB.InTx together with the outbox rows it writes (emit) and the request's
// idempotency record (Tx.CompleteIdempotencyKey), and the request's
// CommitHook, when its context carries one, writes its audit entry last, so
// all of them commit or none does.
//
// A write that is a step of its own is a method on *DB that owns its
// transaction (one statement, or DB.InTx inside it, with any outbox rows it
// writes):
//   - the worker's steps: an activity's change (AttachProductImage,
//     ApplyImportBatch, RecordProofHash, RecordAttempts, the e-invoice and
//     chat records, FlagOrder, RecordSideEffect) and the sweeps
//     (SweepAbandonedCarts, PurgeExpired);
//   - the marks that record a workflow's start (MarkBatchStarted,
//     MarkPlacementsStarted, MarkImageStarted, …), by the dispatcher or by the
//     request that started it;
//   - a chat provider's callback (ApplyChatStatus, ConfirmByChat);
//   - bookkeeping around a request or a sign-in (sessions, OAuth codes and app
//     tokens, a token's last use, claiming and releasing an idempotency key,
//     rate-limit counts);
//   - the theme editor's compare-and-swap saves (SaveDraft, PublishDraft,
//     RestoreThemeVersion), whose one statement is the concurrency check.
//
// One write sits on reader: MarkCardPaymentStarted, a single statement.
//
// Reads are methods on reader, which *DB and *Tx both embed, so one read runs
// on the shared pool or inside a transaction alike. A few reads are on *DB
// alone, where only the pool runs them (FindWaybillsDue and other scans for
// work due, FindOrderSideEffectsStart's batch).
//
// Every call on one store's data names the store: a storeID parameter, or the
// StoreID of the record or order it is given; every query of tenant tables
// filters by it, and the tenant is never read from the context. The calls
// that start elsewhere are lookups that find the store from what the caller
// holds (a session, a token, a subdomain, an authorization code, an
// invitation token, a carrier account, a chat provider's message id), the
// users and apps, which belong to no store, the platform's work across stores
// (the dispatcher's and the sweeps' scans, a webhook batch by its id,
// AppliedImportBatches by its import's id), and codRisk, which reads other
// stores' outcomes on purpose.
//
// Lock order, so concurrent writes cannot deadlock: stock locks variants in id
// order, then their levels in (variant, location) order, never a variant
// after one of its levels (lockVariants, lockLevels); an order routine holds
// its order before the rows that belong to it (its shipments, returns and
// refunds: lockOrderOf, lockShipment, lockReturn) and before its stock; a
// carrier's batch holds its orders in id order, then their shipments
// (ApplyCarrierEvents). That batch also holds back the rows it never reads
// again (deferWrites) and writes them set-wise before it returns
// (flushDeferred), inside the same transaction.
//
// # Imports
//
// storage imports nothing else of this module but its own subpackages
// (storage/theme, storage/catalogcsv, storage/orderref); storage/blob, the
// object store, is its callers'. The pool
// is the package's own: other packages reach Postgres through these methods,
// and the dispatcher's wake-ups through DB.Listen.
package storage
