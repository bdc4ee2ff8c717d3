// The flow the generated Go client runs (testdata/genclient/flow_test.go),
// through a TypeScript client: openapi-typescript turns the served document
// into schema.gen.ts, openapi-fetch makes the calls, tsc type-checks the two
// together and node runs the result against the API at SVC_FLOW_BASE, with a
// webhook receiver at SVC_FLOW_RECEIVER. TestGeneratedTypeScriptClientDrivesARealFlow
// does all of that: if the document and the API disagree, this does not
// compile or exits non-zero. Request bodies are typed through the operations'
// ids (operations["createOrder"]), so a renamed operationId fails the build too.
import createClient from "openapi-fetch";
import type { operations, paths } from "./schema.gen.js";

type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run by TestGeneratedTypeScriptClientDrivesARealFlow`);
  }
  return value;
}

// expect turns an unexpected status into an error naming the step.
function expect(step: string, response: Response, want: number, body: unknown): void {
  if (response.status !== want) {
    throw new Error(`${step}: ${response.status}, want ${want}: ${JSON.stringify(body)}`);
  }
}

async function run(base: string, receiverURL: string): Promise<void> {
  // Sign up: the merchant, the store and a session cookie.
  const session = createClient<paths>({ baseUrl: base });
  const sub = `ts-${Date.now() % 1_000_000_000}`;
  const signup: Body<"signUp"> = {
    email: `${sub}@example.com`,
    name: "TS user",
    password: "a long password",
    store: { name: "TS store", subdomain: sub, currency: "EGP", default_language: "ar" },
  };
  const signed = await session.POST("/api/v1/auth/signup", { body: signup });
  expect("sign up", signed.response, 201, signed.error ?? signed.data);
  const storeId = signed.data!.data!.store!.id;
  const cookie = signed.response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .find((c) => c.startsWith("svc_session="));
  if (!cookie) {
    throw new Error("sign up: no svc_session cookie");
  }

  // Mint a personal access token with the session: a write with it names
  // the API's own origin, as a browser on the merchant pages does.
  const minted = await session.POST("/api/v1/stores/{store_id}/access-tokens", {
    params: { path: { store_id: storeId } },
    headers: { Cookie: cookie, Origin: new URL(base).origin },
    body: { name: "ts", scopes: ["catalog:write", "orders:write", "settings:write"] },
  });
  expect("mint a token", minted.response, 201, minted.error ?? minted.data);
  const token = minted.data!.data!.token!;
  const c = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });
  const store = { path: { store_id: storeId } };

  // Subscribe a webhook before anything happens, so the order reaches it.
  const subscription: Body<"createWebhook"> = { url: receiverURL, events: ["order.created"] };
  const hook = await c.POST("/api/v1/stores/{store_id}/webhooks", { params: store, body: subscription });
  expect("subscribe", hook.response, 201, hook.error ?? hook.data);
  const hookId = hook.data!.data!.id;

  // A product and a variant with stock.
  const product = await c.POST("/api/v1/stores/{store_id}/products", {
    params: store,
    body: { name: "Abaya", price: 45000 },
  });
  expect("create a product", product.response, 201, product.error ?? product.data);
  const variantBody: Body<"createVariant"> = { sku: `${sub}-M`, quantity: 5, options: { size: "M" } };
  const variant = await c.POST("/api/v1/stores/{store_id}/products/{product_id}/variants", {
    params: { path: { store_id: storeId, product_id: product.data!.data!.id } },
    body: variantBody,
  });
  expect("create a variant", variant.response, 201, variant.error ?? variant.data);

  // An order, then the list filtered to its status.
  const order: Body<"createOrder"> = {
    customer: { name: "Mona Adel", phone: "+201001234567" },
    lines: [{ variant_id: variant.data!.id, quantity: 2 }],
    payment_method: "cod",
    shipping_address: { name: "Mona Adel", phone: "+201001234567", line1: "12 Tahrir St", city: "Cairo", country: "EG" },
  };
  const placed = await c.POST("/api/v1/stores/{store_id}/orders", { params: store, body: order });
  expect("create an order", placed.response, 201, placed.error ?? placed.data);
  const list = await c.GET("/api/v1/stores/{store_id}/orders", {
    params: { path: { store_id: storeId }, query: { status: "PENDING" } },
  });
  expect("list orders", list.response, 200, list.error ?? list.data);
  const items = list.data!.data!.items!;
  if (items.length !== 1 || items[0].id !== placed.data!.data!.id) {
    throw new Error(`list orders by status: ${JSON.stringify(list.data)}`);
  }

  // The order.created delivery, read back from the webhook's log.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const logs = await c.GET("/api/v1/stores/{store_id}/webhooks/{webhook_id}/logs", {
      params: { path: { store_id: storeId, webhook_id: hookId } },
    });
    expect("read the webhook log", logs.response, 200, logs.error ?? logs.data);
    const deliveries = logs.data!.data!.items!;
    if (deliveries.length > 0) {
      if (deliveries[0].event !== "order.created" || deliveries[0].status !== "succeeded") {
        throw new Error(`the delivery: ${JSON.stringify(logs.data)}`);
      }
      console.log("delivered", deliveries[0].delivery_id);
      return;
    }
    if (Date.now() > deadline) {
      throw new Error("no delivery in the log after 30 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

run(env("SVC_FLOW_BASE"), env("SVC_FLOW_RECEIVER")).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
